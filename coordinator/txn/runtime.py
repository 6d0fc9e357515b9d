"""Which __transaction_state partitions this broker coordinates (Kafka's TransactionStateManager
loading/unloading), over the same PartitionHost as the group coordinator's runtime.

- `became_leader(p, epoch)`: LOADING (COORDINATOR_LOAD_IN_PROGRESS) while the partition is replayed,
  then ACTIVE; transactions found in PrepareCommit/PrepareAbort are completed (markers resent).
  The coordinator epoch written into markers is the partition's leader epoch.
- `lost_leadership(p)`: its transactional ids are forgotten (NOT_COORDINATOR).
- appends are acks=all; one made at another leader epoch than the one loaded is NOT_COORDINATOR.
- a task aborts transactions past transaction.timeout.ms every
  transaction.abort.timed.out.transaction.cleanup.interval.ms.
"""

import asyncio
import time

from model.errors import ErrorCode

from ..group.partitioner import partition_for
from ..runtime import Load, PartitionHost
from .coordinator import TransactionCoordinator

TRANSACTION_STATE_TOPIC = "__transaction_state"
TXN_ROLE = "txn_coordinator"  # broker.protocol.api_table.Role.TXN_COORDINATOR.value


class TxnRuntime:
    def __init__(self, host: PartitionHost, num_partitions: int, allocate_producer_id, send_markers, *,
                 max_timeout_ms: int = 900000, append_timeout_ms: int = 5000, log=None):
        self.host = host
        self.num_partitions = num_partitions
        self.append_timeout_ms = append_timeout_ms
        self.partitions: dict[int, tuple[Load, int]] = {}
        self.txns = TransactionCoordinator(self, allocate_producer_id, send_markers, max_timeout_ms=max_timeout_ms,
                                           logger=log)
        self._log = log
        self._tasks: dict[int, asyncio.Task] = {}
        self._timeouts: asyncio.Task | None = None

    def partition_of(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.num_partitions)

    def owns(self, role, key: str) -> bool:
        if getattr(role, "value", role) != TXN_ROLE:
            return True
        return self.partition_of(key) in self.partitions

    def status(self, transactional_id: str) -> ErrorCode:
        state = self.partitions.get(self.partition_of(transactional_id))
        if state is None:
            return ErrorCode.not_coordinator
        return ErrorCode.coordinator_load_in_progress if state[0] is Load.LOADING else ErrorCode.none

    # --- TxnLog ---------------------------------------------------------------------------------------
    def coordinator_epoch(self, transactional_id: str) -> int:
        state = self.partitions.get(self.partition_of(transactional_id))
        return state[1] if state is not None else -1

    async def append(self, transactional_id: str, key: bytes, value: bytes | None) -> ErrorCode:
        partition = self.partition_of(transactional_id)
        state = self.partitions.get(partition)
        if state is None or self.host.leader_epoch(TRANSACTION_STATE_TOPIC, partition) != state[1]:
            return ErrorCode.not_leader_or_follower
        return await self.host.append(TRANSACTION_STATE_TOPIC, partition, [(key, value)], self.append_timeout_ms)

    # --- leadership -----------------------------------------------------------------------------------
    def became_leader(self, partition: int, epoch: int) -> None:
        current = self.partitions.get(partition)
        if current is not None and current[1] == epoch:
            return
        if current is not None:
            self._forget(partition)
        self.partitions[partition] = (Load.LOADING, epoch)
        self._tasks[partition] = asyncio.get_running_loop().create_task(self._load(partition, epoch),
                                                                        name=f"load-txns-{partition}")

    def lost_leadership(self, partition: int) -> None:
        if partition in self.partitions:
            self._forget(partition)
            if self._log is not None:
                self._log.info("unloaded transaction partition", partition=partition)

    def _forget(self, partition: int) -> None:
        del self.partitions[partition]
        task = self._tasks.pop(partition, None)
        if task is not None:
            task.cancel()
        self.txns.unload(lambda transactional_id: self.partition_of(transactional_id) != partition)

    async def _load(self, partition: int, epoch: int) -> None:
        started = time.monotonic()
        try:
            await asyncio.sleep(0)  # let the replica manager finish becoming leader
            for count, (key, value) in enumerate(self.host.records(TRANSACTION_STATE_TOPIC, partition)):
                self.txns.replay(key, value)
                if count % 1000 == 999:
                    await asyncio.sleep(0)
                    if self.partitions.get(partition) != (Load.LOADING, epoch):
                        return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a damaged log: stay unloaded rather than answer wrongly
            if self._log is not None:
                self._log.exception("loading transaction partition failed", partition=partition, error=repr(exc))
            self.partitions.pop(partition, None)
            return
        finally:
            self._tasks.pop(partition, None)
        if self.partitions.get(partition) == (Load.LOADING, epoch):
            self.partitions[partition] = (Load.ACTIVE, epoch)
            mine = [t for t in self.txns.txns if self.partition_of(t) == partition]
            self.txns.loaded(mine)
            if self._log is not None:
                self._log.info("loaded transaction partition", partition=partition, epoch=epoch, ids=len(mine),
                               ms=round((time.monotonic() - started) * 1000, 1))

    # --- life cycle -----------------------------------------------------------------------------------
    def start(self, cleanup_interval_ms: int) -> None:
        self._timeouts = asyncio.get_running_loop().create_task(self._abort_periodically(cleanup_interval_ms),
                                                               name="abort-timed-out-transactions")

    async def _abort_periodically(self, interval_ms: int) -> None:
        while True:
            await asyncio.sleep(interval_ms / 1000)
            try:
                await self.txns.abort_timed_out()
            except Exception as exc:  # the next pass tries again
                if self._log is not None:
                    self._log.exception("aborting timed-out transactions failed", error=repr(exc))

    async def close(self) -> None:
        tasks = [*self._tasks.values(), *([self._timeouts] if self._timeouts is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.txns.close()
        self.partitions.clear()
