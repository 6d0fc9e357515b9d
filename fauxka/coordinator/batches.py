"""The runtime's batched appends (Kafka's CoordinatorRuntime batches a coordinator's records the
same way): records queued for a partition during one turn of the event loop go to the leader's log
together, as one batch, at the end of that turn, without waiting for the batch before to
replicate (up to _MAX_IN_FLIGHT batches appended and not yet answered; the rest wait for the next
batch); each batch is answered once the high watermark passed it (acks=all), batches in log order.

So concurrent commits are pipelined into the log and completed together when the followers catch
up, as Kafka's coordinator appends through the replica manager and its produce purgatory (none
answered before it is replicated). The bound keeps batches large when the broker is busy: every
batch costs each follower a fetch round, and on two shared cores more, smaller batches answered
fewer commits per second than two in flight.
"""

import asyncio
import collections
from typing import Callable

from fauxka.model.errors import ErrorCode

from .partition_writer import PartitionWriter

_MAX_IN_FLIGHT = 2  # batches per partition appended and not yet answered
_MAX_BATCH_BYTES = 512 * 1024  # well below __consumer_offsets' max.message.bytes (1 MB)


class AppendBatches:
    def __init__(self, writer: PartitionWriter, topic: str, leads: Callable[[int], bool], timeout_ms: int, log=None):
        self._writer = writer
        self._topic = topic
        self._leads = leads  # the runtime's leader-epoch check
        self._timeout_ms = timeout_ms
        self._log = log
        self._queues: dict[int, list[tuple[list, asyncio.Future]]] = {}  # appends waiting for the next batch
        self._flushes: dict[int, asyncio.Handle] = {}  # the end-of-turn flush, per partition
        self._in_flight: dict[int, collections.deque] = {}  # (acks awaitable, futures) per batch, log order
        self._completers: dict[int, asyncio.Task] = {}

    async def enqueue(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Queue the records for the partition's next batch; the error its append answered."""
        future = asyncio.get_running_loop().create_future()
        self._queues.setdefault(partition, []).append((records, future))
        if partition not in self._flushes:
            self._flushes[partition] = asyncio.get_running_loop().call_soon(self._flush, partition)
        return await future

    def _flush(self, partition: int) -> None:
        """Append what is queued (batches of at most _MAX_BATCH_BYTES) to the local log now; the
        partition's completer answers them once replicated."""
        self._flushes.pop(partition, None)
        if len(self._in_flight.get(partition, ())) >= _MAX_IN_FLIGHT:
            return  # the completer flushes again as soon as a batch is answered
        queue = self._queues.pop(partition, [])
        leads = self._leads(partition)
        while queue:
            size, take = 0, 0
            while take < len(queue) and (take == 0 or size < _MAX_BATCH_BYTES):
                size += sum(len(k) + len(v or b"") for k, v in queue[take][0])
                take += 1
            pending, queue = queue[:take], queue[take:]
            futures = [future for _, future in pending]
            if not leads:
                self._answer(futures, ErrorCode.not_leader_or_follower)
                continue
            try:
                acked = self._writer.begin_append(self._topic, partition, [r for recs, _ in pending for r in recs],
                                                  self._timeout_ms)
            except Exception as exc:  # answered as Kafka answers an unexpected append failure
                self._failed(partition, exc)
                self._answer(futures, ErrorCode.unknown_server_error)
                continue
            self._in_flight.setdefault(partition, collections.deque()).append((acked, futures))
        if partition in self._in_flight and partition not in self._completers:
            self._completers[partition] = asyncio.get_running_loop().create_task(
                self._complete(partition), name=f"append-{self._topic}-{partition}")

    async def _complete(self, partition: int) -> None:
        """Answer the partition's batches in the order they were appended (a later commit of the
        same offset is never applied before an earlier one)."""
        in_flight = self._in_flight[partition]
        try:
            while in_flight:
                acked, futures = in_flight[0]
                try:
                    code = await acked
                except Exception as exc:
                    self._failed(partition, exc)
                    code = ErrorCode.unknown_server_error
                in_flight.popleft()
                self._answer(futures, code)
                if self._queues.get(partition) and partition not in self._flushes:
                    self._flush(partition)
        finally:
            self._drop(partition)

    def _drop(self, partition: int) -> None:
        """The completer ended (or was cancelled, perhaps before it ran): batches still in flight
        are answered NOT_LEADER_OR_FOLLOWER (the client retries)."""
        for acked, futures in self._in_flight.pop(partition, ()):
            acked.close()
            self._answer(futures, ErrorCode.not_leader_or_follower)
        self._completers.pop(partition, None)

    @staticmethod
    def _answer(futures: list[asyncio.Future], code: ErrorCode) -> None:
        for future in futures:
            if not future.done():
                future.set_result(code)

    def _failed(self, partition: int, exc: Exception) -> None:
        if self._log is not None:
            self._log.error("coordinator append failed", topic=self._topic, partition=partition, error=repr(exc))

    async def close(self) -> None:
        """Queued appends are answered NOT_LEADER_OR_FOLLOWER, the completers cancelled."""
        for handle in self._flushes.values():
            handle.cancel()
        self._flushes.clear()
        for queue in self._queues.values():
            self._answer([future for _, future in queue], ErrorCode.not_leader_or_follower)
        self._queues.clear()
        tasks = list(self._completers.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for partition in list(self._in_flight):
            self._drop(partition)
