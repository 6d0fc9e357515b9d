"""The group runtime: which __consumer_offsets partitions this broker coordinates, their
loading and unloading, and the group coordinator's appends (Kafka's GroupMetadataManager
loading/unloading plus CoordinatorRuntime's shape in 3.9); fauxka/coordinator/txn/runtime.py is its
sibling for __transaction_state.

- `became_leader(p, epoch)`: the partition is LOADING (requests get COORDINATOR_LOAD_IN_PROGRESS)
  while its log is replayed from the log start to the log end, then ACTIVE.
- `lost_leadership(p)`: its groups are forgotten; requests get NOT_COORDINATOR.
- appends go to the group's partition with acks=all through the `PartitionHost` (the data plane's
  replica manager on a broker; a list in tests); an append at another leader epoch than the one
  loaded is refused with NOT_COORDINATOR.
"""

import asyncio
import collections

from fauxka.model.errors import ErrorCode

from ..loads import Load, PartitionLoads
from ..partition_host import PartitionHost
from .config import GroupConfig
from .coordinator import GroupCoordinator
from .partitioner import partition_for

__all__ = ["GroupRuntime", "GROUP_METADATA_TOPIC", "GROUP_ROLE"]

GROUP_METADATA_TOPIC = "__consumer_offsets"
GROUP_ROLE = "group_coordinator"  # broker.protocol.api_table.Role.GROUP_COORDINATOR.value
_MAX_IN_FLIGHT = 2  # batches per partition appended and not yet answered
_MAX_BATCH_BYTES = 512 * 1024  # well below __consumer_offsets' max.message.bytes (1 MB)


class _GroupLog:
    """The GroupCoordinator's GroupLog over the runtime."""

    def __init__(self, runtime: "GroupRuntime"):
        self._runtime = runtime

    async def write_records(self, group_id: str, records):
        return await self._runtime.write_records(group_id, records)

    async def write_txn_records(self, group_id: str, records, producer_id: int, epoch: int):
        return await self._runtime.write_txn_records(group_id, records, producer_id, epoch)


class GroupRuntime:
    def __init__(self, host: PartitionHost, config: GroupConfig, num_partitions: int, *, log=None,
                 commit_timeout_ms: int = 5000, metrics=None):
        self.host = host
        self.num_partitions = num_partitions
        self.commit_timeout_ms = commit_timeout_ms
        self.groups = GroupCoordinator(config, _GroupLog(self), metrics=metrics)
        self.loads = PartitionLoads(host, GROUP_METADATA_TOPIC, self._replay, self._loaded, self._unload, log=log)
        self.partitions = self.loads.partitions  # partition -> (state, leader epoch)
        self.load_times_ms = self.loads.load_times_ms
        self._log = log
        self._expiry: asyncio.Task | None = None
        self._queues: dict[int, list[tuple[list, asyncio.Future]]] = {}  # appends waiting for the next batch
        self._flushes: dict[int, asyncio.Handle] = {}  # the end-of-turn flush, per partition
        self._in_flight: dict[int, collections.deque] = {}  # (acks awaitable, futures) per batch, log order
        self._completers: dict[int, asyncio.Task] = {}

    # --- dispatch ------------------------------------------------------------------------------------
    def partition_of(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def owns(self, role, key: str) -> bool:
        """fauxka/broker/dispatch.py's check: True while this broker leads (or loads) the key's partition.
        Roles other than the group coordinator's are not this runtime's to refuse."""
        if getattr(role, "value", role) != GROUP_ROLE:
            return True
        return self.partition_of(key) in self.partitions

    def loading(self) -> bool:
        """Some partition of this broker's is still being loaded (a listing answers COORDINATOR_LOAD_IN_PROGRESS)."""
        return self.loads.loading()

    def status(self, group_id: str) -> ErrorCode:
        """NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or NONE for the group (validateGroupStatus)."""
        return self.loads.status(self.partition_of(group_id))

    # --- leadership ----------------------------------------------------------------------------------
    def became_leader(self, partition: int, epoch: int) -> None:
        self.loads.became_leader(partition, epoch)

    def lost_leadership(self, partition: int) -> None:
        self.loads.lost_leadership(partition)

    def _replay(self, partition: int, key, value, producer_id: int = -1, marker: bool | None = None) -> None:
        if marker is not None:
            self._complete_txn(producer_id, marker, partition)
        else:
            self.groups.replay(key, value, producer_id)

    def txn_marker_written(self, producer_id: int, commit: bool, partition: int) -> None:
        """WriteTxnMarkers wrote the producer's marker to the partition (Kafka's
        scheduleHandleTxnCompletion): its pending transactional offsets complete now. Not while the
        partition loads: the replay reads to the live log end, so it meets the marker after the
        offsets it completes (Kafka runs the completion after the load, on the same scheduler)."""
        state = self.partitions.get(partition)
        if state is not None and state[0] is Load.ACTIVE:
            self._complete_txn(producer_id, commit, partition)

    def _complete_txn(self, producer_id: int, commit: bool, partition: int) -> None:
        self.groups.complete_txn_offsets(producer_id, commit, lambda g: self.partition_of(g) == partition)

    def _unload(self, partition: int) -> None:
        keep = lambda group_id: self.partition_of(group_id) != partition  # noqa: E731
        self.groups.unload(keep)
        self.groups.unload_txn_offsets(keep)

    def _loaded(self, partition: int) -> dict:
        loaded = [g for g in self.groups.groups if self.partition_of(g) == partition]
        self.groups.loaded(loaded)
        return {"groups": len(loaded)}

    # --- appends -------------------------------------------------------------------------------------
    async def write_records(self, group_id: str, records: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Queue the records for the group's partition. The appends queued during one turn of the
        event loop go to the leader's log together, as one batch, at the end of that turn, without
        waiting for the batch before to replicate (up to _MAX_IN_FLIGHT batches appended and not yet
        answered; the rest wait for the next batch); each batch is answered once the high watermark
        passed it (acks=all), batches in log order. So concurrent commits are pipelined into the
        log and completed together when the followers catch up, as Kafka's coordinator appends
        through the replica manager and its produce purgatory (none answered before it is
        replicated). The bound keeps batches large when the broker is busy: every batch costs each
        follower a fetch round, and on two shared cores more, smaller batches answered fewer
        commits per second than two in flight."""
        partition = self.partition_of(group_id)
        if not self.loads.leads(partition):
            return ErrorCode.not_leader_or_follower
        future = asyncio.get_running_loop().create_future()
        self._queues.setdefault(partition, []).append((records, future))
        if partition not in self._flushes:
            self._flushes[partition] = asyncio.get_running_loop().call_soon(self._flush, partition)
        return await future

    async def write_txn_records(self, group_id: str, records: list[tuple[bytes, bytes | None]], producer_id: int,
                                epoch: int) -> ErrorCode:
        """TxnOffsetCommit's records as their own transactional batch (never shared with others')."""
        partition = self.partition_of(group_id)
        if not self.loads.leads(partition):
            return ErrorCode.not_leader_or_follower
        return await self.host.append(GROUP_METADATA_TOPIC, partition, records, self.commit_timeout_ms,
                                      (producer_id, epoch))

    def _flush(self, partition: int) -> None:
        """Append what is queued (batches of at most _MAX_BATCH_BYTES) to the local log now; the
        partition's completer answers them once replicated."""
        self._flushes.pop(partition, None)
        if len(self._in_flight.get(partition, ())) >= _MAX_IN_FLIGHT:
            return  # the completer flushes again as soon as a batch is answered
        queue = self._queues.pop(partition, [])
        leads = self.loads.leads(partition)
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
                acked = self.host.begin_append(GROUP_METADATA_TOPIC, partition,
                                               [r for recs, _ in pending for r in recs], self.commit_timeout_ms)
            except Exception as exc:  # answered as Kafka answers an unexpected append failure
                self._failed(partition, exc)
                self._answer(futures, ErrorCode.unknown_server_error)
                continue
            self._in_flight.setdefault(partition, collections.deque()).append((acked, futures))
        if partition in self._in_flight and partition not in self._completers:
            self._completers[partition] = asyncio.get_running_loop().create_task(
                self._complete(partition), name=f"offsets-append-{partition}")

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
            self._log.error("offsets append failed", partition=partition, error=repr(exc))

    # --- life cycle ----------------------------------------------------------------------------------
    def start(self, retention_check_ms: int) -> None:
        self._expiry = asyncio.get_running_loop().create_task(self._expire_periodically(retention_check_ms),
                                                             name="expire-offsets")

    async def _expire_periodically(self, interval_ms: int) -> None:
        while True:
            await asyncio.sleep(interval_ms / 1000)
            try:
                await self.groups.expire_offsets()
            except Exception as exc:  # the next pass tries again
                if self._log is not None:
                    self._log.exception("offset expiry failed", error=repr(exc))

    async def close(self) -> None:
        for handle in self._flushes.values():
            handle.cancel()
        self._flushes.clear()
        for queue in self._queues.values():
            self._answer([future for _, future in queue], ErrorCode.not_leader_or_follower)
        self._queues.clear()
        tasks = [*self._completers.values(), *([self._expiry] if self._expiry is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for partition in list(self._in_flight):
            self._drop(partition)
        await self.loads.close()
        self.groups.close()
