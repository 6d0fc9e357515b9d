"""What a coordinator runtime needs from the data plane (Kafka's PartitionWriter, with the reads of
its CoordinatorLoader): the partitions of its internal topic (__consumer_offsets,
__transaction_state) as this broker leads them. The broker's side, the one writer both coordinators
share, is fauxka/broker/coordination/replica_writer.py (over the replica manager); unit tests
use a list."""

from typing import Coroutine, Iterable, Protocol

from fauxka.model.errors import ErrorCode


class PartitionWriter(Protocol):
    def leader_epoch(self, topic: str, partition: int) -> int | None:
        """This broker's leader epoch for the partition, None when it does not lead it."""

    def read_records(self, topic: str, partition: int) -> Iterable[tuple]:
        """Every record in the partition's log, oldest first: (key, value), or (key, value,
        producer id, marker) where transactions matter (fauxka/coordinator/runtime.py passes either on)."""

    async def append_batch(self, topic: str, partition: int, records: list[tuple[bytes, bytes | None]],
                           timeout_ms: int, producer: tuple[int, int] | None = None, appended=None) -> ErrorCode:
        """Append with acks=all; the error the produce path answered (ErrorCode.none: replicated).
        `producer` (id, epoch): one transactional batch of that producer. `appended()`, when
        given, runs as soon as the leader's log has the records, before they are replicated."""

    def begin_append(self, topic: str, partition: int, records: list[tuple[bytes, bytes | None]],
                     timeout_ms: int) -> Coroutine[None, None, ErrorCode]:
        """Append to the leader's log now (acks=all); the coroutine returned answers the error once
        the high watermark passed the batch, or at `timeout_ms` from now (REQUEST_TIMED_OUT)."""
