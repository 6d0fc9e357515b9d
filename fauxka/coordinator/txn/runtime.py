"""Which __transaction_state partitions this broker coordinates (Kafka's TransactionStateManager
loading/unloading), over the same PartitionHost as the group coordinator's runtime.

- `became_leader(p, epoch)`: LOADING (COORDINATOR_LOAD_IN_PROGRESS) while the partition is replayed,
  then ACTIVE; transactions found in PrepareCommit/PrepareAbort are completed (markers resent).
  The coordinator epoch written into markers is the partition's leader epoch.
- `lost_leadership(p)`: its transactional ids are forgotten (NOT_COORDINATOR).
- appends are acks=all; one made at another leader epoch than the one loaded is NOT_COORDINATOR.
  A state change waits for its replication up to the transaction's own timeout, a tombstone up to
  request.timeout.ms (TransactionStateManager.appendTransactionToLog / removeExpiredTransactionalIds):
  on a loaded machine a shorter wait answered COORDINATOR_NOT_AVAILABLE while Kafka's succeeds.
- a task aborts transactions past transaction.timeout.ms every
  transaction.abort.timed.out.transaction.cleanup.interval.ms; another removes ids idle longer than
  transactional.id.expiration.ms every transaction.remove.expired.transaction.cleanup.interval.ms.
"""

import asyncio

from fauxka.model.errors import ErrorCode

from ..group.partitioner import partition_for
from ..loads import PartitionLoads
from ..partition_host import PartitionHost
from .coordinator import TransactionCoordinator

TRANSACTION_STATE_TOPIC = "__transaction_state"
TXN_ROLE = "txn_coordinator"  # broker.protocol.api_table.Role.TXN_COORDINATOR.value


class TxnRuntime:
    def __init__(self, host: PartitionHost, num_partitions: int, allocate_producer_id, send_markers, *,
                 max_timeout_ms: int = 900000, append_timeout_ms: int = 30000, log=None):
        self.host = host
        self.num_partitions = num_partitions
        self.append_timeout_ms = append_timeout_ms
        self.txns = TransactionCoordinator(self, allocate_producer_id, send_markers, max_timeout_ms=max_timeout_ms,
                                           logger=log)
        self.loads = PartitionLoads(host, TRANSACTION_STATE_TOPIC, lambda _p, *record: self.txns.replay(*record), self._loaded, self._unload, log=log)
        self.partitions = self.loads.partitions  # partition -> (state, leader epoch)
        self._log = log
        self._periodic: list[asyncio.Task] = []

    def partition_of(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.num_partitions)

    def owns(self, role, key: str) -> bool:
        if getattr(role, "value", role) != TXN_ROLE:
            return True
        return self.partition_of(key) in self.partitions

    def status(self, transactional_id: str) -> ErrorCode:
        return self.loads.status(self.partition_of(transactional_id))

    def loading(self) -> bool:
        """Some partition of this broker's is still being loaded (a listing answers COORDINATOR_LOAD_IN_PROGRESS)."""
        return self.loads.loading()

    # --- TxnLog ---------------------------------------------------------------------------------------
    def coordinator_epoch(self, transactional_id: str) -> int:
        state = self.partitions.get(self.partition_of(transactional_id))
        return state[1] if state is not None else -1

    async def append(self, transactional_id: str, key: bytes, value: bytes | None, appended=None,
                     timeout_ms: int | None = None) -> ErrorCode:
        partition = self.partition_of(transactional_id)
        if not self.loads.leads(partition):
            return ErrorCode.not_leader_or_follower
        timeout_ms = self.append_timeout_ms if timeout_ms is None else timeout_ms
        if appended is None:
            return await self.host.append(TRANSACTION_STATE_TOPIC, partition, [(key, value)], timeout_ms)
        return await self.host.append(TRANSACTION_STATE_TOPIC, partition, [(key, value)], timeout_ms,
                                      appended=appended)

    # --- leadership -----------------------------------------------------------------------------------
    def became_leader(self, partition: int, epoch: int) -> None:
        self.loads.became_leader(partition, epoch)

    def lost_leadership(self, partition: int) -> None:
        self.loads.lost_leadership(partition)

    def _unload(self, partition: int) -> None:
        self.txns.unload(lambda transactional_id: self.partition_of(transactional_id) != partition)

    def _loaded(self, partition: int) -> dict:
        mine = [t for t in self.txns.txns if self.partition_of(t) == partition]
        self.txns.loaded(mine)
        return {"ids": len(mine)}

    # --- life cycle -----------------------------------------------------------------------------------
    def start(self, cleanup_interval_ms: int, expiration_ms: int = 604800000,
              expiration_interval_ms: int = 3600000) -> None:
        loop = asyncio.get_running_loop()
        self._periodic = [
            loop.create_task(self._every(cleanup_interval_ms, self.txns.abort_timed_out),
                             name="abort-timed-out-transactions"),
            loop.create_task(self._every(expiration_interval_ms, lambda: self.txns.expire_ids(expiration_ms)),
                             name="expire-transactional-ids")]

    async def _every(self, interval_ms: int, work) -> None:
        while True:
            await asyncio.sleep(interval_ms / 1000)
            try:
                await work()
            except Exception as exc:  # the next pass tries again
                if self._log is not None:
                    self._log.exception("transaction coordinator housekeeping failed", error=repr(exc))

    async def close(self) -> None:
        for task in self._periodic:
            task.cancel()
        await asyncio.gather(*self._periodic, return_exceptions=True)
        await self.loads.close()
        await self.txns.close()
