"""The one partition writer both coordinators write through (Kafka's CoordinatorPartitionWriter,
with CoordinatorLoaderImpl's reads): fauxka.coordinator.partition_writer.PartitionWriter over the
replica manager, for the records of __consumer_offsets and __transaction_state, and the leader's
side of WriteTxnMarkers, the COMMIT/ABORT markers appended to data partitions (ReplicaManager.
appendRecords with origin COORDINATOR). A marker written to __consumer_offsets is told to that
topic's listener (the group coordinator's `txn_marker_written`: Kafka's
scheduleHandleTxnCompletion), which completes the producer's pending transactional offsets."""

import time
from typing import Callable, Iterable

from fauxka.model.errors import ErrorCode
from fauxka.storage.batch import iter_headers
from fauxka.storage.records import Record, build, build_control_batch, control_type, decode

from ..replication.replica_manager import ReplicaManager

_READ_BYTES = 1 << 20
TopicPartition = tuple[str, int]
MarkerListener = Callable[[int, bool, int], None]  # (producer id, commit, partition)


class ReplicaPartitionWriter:
    def __init__(self, replicas: ReplicaManager):
        self._replicas = replicas
        self._marker_listeners: dict[str, MarkerListener] = {}

    def leader_epoch(self, topic: str, partition: int) -> int | None:
        p = self._replicas.partitions.get((topic, partition))
        return p.leader_epoch if p is not None and p.is_leader else None

    def high_watermark(self, topic: str, partition: int) -> int | None:
        """The partition's high watermark where this broker holds a replica of it (consumer lag)."""
        p = self._replicas.partitions.get((topic, partition))
        return p.high_watermark if p is not None else None

    def read_records(self, topic: str, partition: int) -> Iterable[tuple]:
        """(key, value, producer id, marker) of every record: producer id -1 outside transactions,
        marker True/False for a COMMIT/ABORT control record (key and value None), else None. Up to
        the log end as it is when each chunk is read, as Kafka's load (GroupMetadataManager's
        `def logEndOffset`): a transaction marker appended while the partition loads is replayed
        after the records it completes, never before them."""
        p = self._replicas.partitions.get((topic, partition))
        if p is None:
            return
        log = p.log
        position = log.log_start_offset
        while position < log.log_end_offset:
            buf = log.read(position, _READ_BYTES, log.log_end_offset, True)
            if not buf:
                return
            for header in iter_headers(buf):
                pid = header.producer_id if header.is_transactional else -1
                if header.is_control:
                    kind = control_type(buf, header)
                    if kind is not None:
                        yield None, None, pid, kind == 1
                else:
                    for record in decode(buf, header):
                        yield record.key, record.value, pid, None
                position = header.next_offset
        return

    async def append_batch(self, topic: str, partition: int, records, timeout_ms: int,
                           producer: tuple[int, int] | None = None, appended=None) -> ErrorCode:
        """acks=all; `producer` (id, epoch): a transactional batch (TxnOffsetCommit's offsets);
        `appended()` runs once the leader's log has the batch (not when the append failed)."""
        batch = _batch(records, producer)
        key = (topic, partition)
        on_appended = None if appended is None else (lambda r: r[key].error == ErrorCode.none and appended())
        results = await self._replicas.append_records({key: batch}, -1, timeout_ms,
                                                      origin="client" if producer is None else "coordinator",
                                                      on_appended=on_appended)
        return results[(topic, partition)].error

    def begin_append(self, topic: str, partition: int, records, timeout_ms: int):
        """The batch is in the leader's log when this returns; the coroutine waits for acks=all
        (the produce purgatory's DelayedProduce), its deadline counted from now."""
        deadline = time.monotonic() + timeout_ms / 1000
        replicas: ReplicaManager = self._replicas
        results = replicas.append_local({(topic, partition): _batch(records, None)}, -1)

        async def acked() -> ErrorCode:
            await replicas.wait_for_acks(results, max(0, int((deadline - time.monotonic()) * 1000)))
            return results[(topic, partition)].error
        return acked()

    # --- transaction markers ---------------------------------------------------------------------------
    def on_markers(self, topic: str, listener: MarkerListener) -> None:
        """`listener(producer_id, commit, partition)` after a marker is written to one of the topic's partitions."""
        self._marker_listeners[topic] = listener

    async def write_markers(self, producer_id: int, epoch: int, commit: bool, coordinator_epoch: int,
                            partitions: list[TopicPartition], timeout_ms: int) -> dict[TopicPartition, ErrorCode]:
        """One control batch per partition, acks=all (WriteTxnMarkers here, or this broker's own
        partitions of a transaction it coordinates: txn_markers.py)."""
        batch = bytes(build_control_batch(producer_id, epoch, commit, coordinator_epoch, int(time.time() * 1000)))
        results = {tp: r.error for tp, r in (await self._replicas.append_records(
            dict.fromkeys(partitions, batch), -1, timeout_ms, origin="coordinator")).items()}
        for (topic, index), code in results.items():
            listener = self._marker_listeners.get(topic)
            if listener is not None and code == ErrorCode.none:
                listener(producer_id, commit, index)
        return results


def _batch(records, producer: tuple[int, int] | None) -> bytes:
    now = int(time.time() * 1000)
    pid, epoch = producer if producer is not None else (-1, -1)
    return bytes(build([Record(i, now, k, v, []) for i, (k, v) in enumerate(records)], 0,
                       transactional=producer is not None, producer_id=pid, producer_epoch=epoch))
