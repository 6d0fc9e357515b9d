"""The coordinator runtime: which __consumer_offsets partitions this broker coordinates, their
loading and unloading, and the group coordinator's appends (Kafka's GroupMetadataManager
loading/unloading plus CoordinatorRuntime's shape in 3.9).

- `became_leader(p, epoch)`: the partition is LOADING (requests get COORDINATOR_LOAD_IN_PROGRESS)
  while its log is replayed from the log start to the log end, then ACTIVE.
- `lost_leadership(p)`: its groups are forgotten; requests get NOT_COORDINATOR.
- appends go to the group's partition with acks=all through the `PartitionHost` (the data plane's
  replica manager on a broker; a list in tests); an append at another leader epoch than the one
  loaded is refused with NOT_COORDINATOR.
"""

import asyncio
from typing import Iterable, Protocol

from model.errors import ErrorCode

from .group.config import GroupConfig
from .group.coordinator import GroupCoordinator
from .group.partitioner import partition_for
from .loads import Load, PartitionLoads

__all__ = ["CoordinatorRuntime", "Load", "PartitionHost", "GROUP_METADATA_TOPIC"]

GROUP_METADATA_TOPIC = "__consumer_offsets"
GROUP_ROLE = "group_coordinator"
_MAX_BATCH_BYTES = 512 * 1024  # well below __consumer_offsets' max.message.bytes (1 MB)  # broker.protocol.api_table.Role.GROUP_COORDINATOR.value


class PartitionHost(Protocol):
    """What the coordinator needs from the data plane."""

    def leader_epoch(self, topic: str, partition: int) -> int | None:
        """This broker's leader epoch for the partition, None when it does not lead it."""

    def records(self, topic: str, partition: int) -> Iterable[tuple]:
        """Every record in the partition's log, oldest first: (key, value), or (key, value,
        producer id, marker) where transactions matter (coordinator/loads.py passes either on)."""

    async def append(self, topic: str, partition: int, records: list[tuple[bytes, bytes | None]],
                     timeout_ms: int, producer: tuple[int, int] | None = None, appended=None) -> ErrorCode:
        """Append with acks=all; the error the produce path answered (ErrorCode.none: replicated).
        `producer` (id, epoch): one transactional batch of that producer. `appended()`, when
        given, runs as soon as the leader's log has the records, before they are replicated."""


class _GroupLog:
    """The GroupCoordinator's GroupLog over the runtime."""

    def __init__(self, runtime: "CoordinatorRuntime"):
        self._runtime = runtime

    async def append(self, group_id: str, records):
        return await self._runtime.append(group_id, records)

    async def append_transactional(self, group_id: str, records, producer_id: int, epoch: int):
        return await self._runtime.append_transactional(group_id, records, producer_id, epoch)


class CoordinatorRuntime:
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
        self._flushers: dict[int, asyncio.Task] = {}

    # --- dispatch ------------------------------------------------------------------------------------
    def partition_of(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def owns(self, role, key: str) -> bool:
        """broker/dispatch.py's check: True while this broker leads (or loads) the key's partition.
        Roles other than the group coordinator's are not this runtime's to refuse."""
        if getattr(role, "value", role) != GROUP_ROLE:
            return True
        return self.partition_of(key) in self.partitions

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
            self.groups.complete_txn_offsets(producer_id, marker, lambda g: self.partition_of(g) == partition)
        else:
            self.groups.replay(key, value, producer_id)

    def _unload(self, partition: int) -> None:
        self.groups.unload(lambda group_id: self.partition_of(group_id) != partition)

    def _loaded(self, partition: int) -> dict:
        loaded = [g for g in self.groups.groups if self.partition_of(g) == partition]
        self.groups.loaded(loaded)
        return {"groups": len(loaded)}

    # --- appends -------------------------------------------------------------------------------------
    async def append(self, group_id: str, records: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Queue the records for the group's partition; appends that arrive while one is being
        replicated go out together in the next batch (as Kafka 3.9's CoordinatorRuntime batches
        writes), so many concurrent commits cost one acks=all round trip, not one each."""
        partition = self.partition_of(group_id)
        if not self.loads.leads(partition):
            return ErrorCode.not_leader_or_follower
        future = asyncio.get_running_loop().create_future()
        self._queues.setdefault(partition, []).append((records, future))
        if partition not in self._flushers:
            task = asyncio.get_running_loop().create_task(self._flush(partition), name=f"offsets-append-{partition}")
            self._flushers[partition] = task
        return await future

    async def append_transactional(self, group_id: str, records: list[tuple[bytes, bytes | None]], producer_id: int,
                                   epoch: int) -> ErrorCode:
        """TxnOffsetCommit's records as their own transactional batch (never shared with others')."""
        partition = self.partition_of(group_id)
        if not self.loads.leads(partition):
            return ErrorCode.not_leader_or_follower
        return await self.host.append(GROUP_METADATA_TOPIC, partition, records, self.commit_timeout_ms,
                                      (producer_id, epoch))

    async def _flush(self, partition: int) -> None:
        pending: list = []
        try:
            while self._queues.get(partition):
                queue = self._queues[partition]
                size, take = 0, 0
                while take < len(queue) and (take == 0 or size < _MAX_BATCH_BYTES):
                    size += sum(len(k) + len(v or b"") for k, v in queue[take][0])
                    take += 1
                pending, self._queues[partition] = queue[:take], queue[take:]
                records = [r for recs, _ in pending for r in recs]
                try:
                    code = await self.host.append(GROUP_METADATA_TOPIC, partition, records, self.commit_timeout_ms)
                except Exception as exc:  # answered as Kafka answers an unexpected append failure
                    if self._log is not None:
                        self._log.exception("offsets append failed", partition=partition, error=repr(exc))
                    code = ErrorCode.unknown_server_error
                for _, future in pending:
                    if not future.done():
                        future.set_result(code)
                pending = []
        finally:
            for _, future in pending + self._queues.pop(partition, []):
                if not future.done():
                    future.set_result(ErrorCode.not_leader_or_follower)
            self._flushers.pop(partition, None)

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
        tasks = [*self._flushers.values(), *([self._expiry] if self._expiry is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.loads.close()
        self.groups.close()
