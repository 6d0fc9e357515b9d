"""The transaction coordinator's rules (Kafka 3.x TransactionCoordinator + TransactionStateManager).

Every change of a transactional id's state is a TransactionLogValue appended with acks=all to its
__transaction_state partition before it is answered (`pending` meanwhile: CONCURRENT_TRANSACTIONS).
- InitProducerId: a new id gets a producer id at epoch 0; Empty/Complete* bump the epoch (a new
  producer id when it would overflow); Ongoing is fenced: PrepareEpochFence with epoch+1, then the
  transaction is aborted with that epoch and the caller told CONCURRENT_TRANSACTIONS (it retries and
  then gets epoch+2); Prepare* answers CONCURRENT_TRANSACTIONS. KIP-360: a caller naming its
  producer id/epoch that is neither the current nor the last one is PRODUCER_FENCED.
- AddPartitionsToTxn / AddOffsetsToTxn: Ongoing with the union of the partitions.
- EndTxn: Prepare{Commit,Abort} appended and answered; the markers are then written to every
  partition's leader and Complete{Commit,Abort} appended (an idempotent retry of a completed
  EndTxn answers NONE, the other outcome INVALID_TXN_STATE). Complete* takes effect once it is
  on the leader's log, before it is replicated (as the KRaft-era CoordinatorRuntime applies
  records): the next transaction's Ongoing is appended after it and answered only once
  replicated, which replicates the Complete* too, so no answer rests on an unreplicated record.
- transaction.timeout.ms: an Ongoing transaction older than its timeout is aborted with a bumped
  epoch (abortTimedOutTransactions), so its producer is fenced.
"""

import asyncio
import time
from typing import Awaitable, Callable, Protocol

from fauxka.model.errors import ErrorCode, KafkaError

from ..runtime import CoordinatorRuntime
from .records import TxnLogValue, decode_key, decode_value, encode_key, encode_value
from .state import COMPLETE, PREPARING, TopicPartition, TxnMetadata, TxnState, TxnStats, now_ms

MAX_EPOCH = 32767
SETTLE_S = 0.2  # how long a request waits for the previous transaction's markers (see _settled)


class TxnMarkerChannel(Protocol):
    """Where markers go (TransactionMarkerChannelManager): fauxka/broker/coordination/txn_markers.py."""

    async def send_markers(self, producer_id: int, epoch: int, commit: bool, coordinator_epoch: int,
                           partitions: set[TopicPartition]) -> None:
        """Returns once every partition has the producer's COMMIT/ABORT marker."""


def _store_error(code: ErrorCode) -> ErrorCode:
    """TransactionStateManager.appendTransactionToLog's mapping of append errors."""
    if code == ErrorCode.none:
        return code
    if code in (ErrorCode.unknown_topic_or_partition, ErrorCode.not_enough_replicas,
                ErrorCode.not_enough_replicas_after_append, ErrorCode.request_timed_out):
        return ErrorCode.coordinator_not_available
    if code in (ErrorCode.not_leader_or_follower, ErrorCode.kafka_storage_error):
        return ErrorCode.not_coordinator
    return ErrorCode.unknown_server_error


class TransactionCoordinator:
    def __init__(self, runtime: CoordinatorRuntime, allocate_producer_id: Callable[[], Awaitable[int]],
                 markers: TxnMarkerChannel, *, max_timeout_ms: int = 900000, logger=None):
        self.runtime = runtime  # the appends to __transaction_state; a list in unit tests
        self.allocate_producer_id = allocate_producer_id
        self.markers = markers
        self.max_timeout_ms = max_timeout_ms
        self.txns: dict[str, TxnMetadata] = {}
        self._logger = logger
        self._tasks: dict[str, asyncio.Task] = {}  # per id: its completion (or fence), cancelled on unload
        self._settles: dict[str, asyncio.Event] = {}  # set when the id's Complete* took effect
        self._trailing: set[asyncio.Task] = set()  # Complete* in effect, its replication awaited
        self.stats = TxnStats()

    # --- whose ids are coordinated here ---------------------------------------------------------------
    def owns(self, transactional_id: str) -> bool:  # fauxka/broker/dispatch.py's check
        return self.runtime.owns(transactional_id)

    def status(self, transactional_id: str) -> ErrorCode:
        """NONE, NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS (TransactionStateManager.getTransactionState)."""
        return self.runtime.status(transactional_id)

    def loading(self) -> bool:  # a listing answers COORDINATOR_LOAD_IN_PROGRESS
        return self.runtime.loading()

    def metadata(self, transactional_id: str) -> TxnMetadata | None:
        """The id's state as this coordinator holds it (DescribeTransactions, AddPartitionsToTxn's verify)."""
        return self.txns.get(transactional_id)

    def list_transactions(self) -> list[tuple[str, TxnMetadata]]:  # by id (ListTransactions)
        return sorted(self.txns.items())

    # --- writing --------------------------------------------------------------------------------------
    async def _write(self, meta: TxnMetadata, state: TxnState, *, epoch: int | None = None,
                     producer_id: int | None = None, partitions: set | None = None, start_ms: int | None = None,
                     timeout_ms: int | None = None, early: Callable[[], None] | None = None) -> ErrorCode:
        """Append the new state, then apply it (TransactionMetadata.prepareTransitionTo + completeTransitionTo).
        `early`: apply it as soon as the leader's log has it, then call early() (Complete* only)."""
        new = TxnMetadata(meta.transactional_id, meta.producer_id if producer_id is None else producer_id,
                          meta.producer_epoch if epoch is None else epoch,
                          meta.timeout_ms if timeout_ms is None else timeout_ms, state,
                          set(meta.partitions if partitions is None else partitions),
                          meta.start_ms if start_ms is None else start_ms, now_ms())
        applied = False

        def apply() -> None:
            nonlocal applied
            meta.pending = False
            if self.txns.get(meta.transactional_id) is meta:
                _apply(meta, new)
                applied = True
                early()
        meta.pending = True
        key, value = encode_key(meta.transactional_id), encode_value(_to_value(new))
        try:  # replication awaited up to the transaction's timeout, as appendTransactionToLog
            code = _store_error(await self.runtime.write_batch(meta.transactional_id, [(key, value)],
                                                               appended=None if early is None else apply,
                                                               timeout_ms=new.timeout_ms))
        finally:
            if not applied:
                meta.pending = False
        if applied:
            return code  # in effect already; the record stays on the leader's log whatever the acks said
        if code == ErrorCode.none and self.txns.get(meta.transactional_id) is meta:
            _apply(meta, new)
        elif code == ErrorCode.none:
            code = ErrorCode.not_coordinator
        return code

    # --- InitProducerId -------------------------------------------------------------------------------
    async def init_producer_id(self, transactional_id: str, timeout_ms: int, expected_pid: int = -1,
                               expected_epoch: int = -1) -> tuple[ErrorCode, int, int]:
        if not transactional_id:
            return ErrorCode.invalid_request, -1, -1
        if timeout_ms <= 0 or timeout_ms > self.max_timeout_ms:
            return ErrorCode.invalid_transaction_timeout, -1, -1
        code = await self._settled(transactional_id)
        if code != ErrorCode.none:
            return code, -1, -1
        meta = self.txns.get(transactional_id)
        if meta is None:
            code, pid = await self._new_producer_id()
            if code != ErrorCode.none:
                return code, -1, -1
            meta = self.txns.setdefault(transactional_id, TxnMetadata(transactional_id, pid, -1, timeout_ms))
        if meta.pending or meta.state in PREPARING:
            return ErrorCode.concurrent_transactions, -1, -1
        if expected_pid != -1 and (expected_pid, expected_epoch) not in (
                (meta.producer_id, meta.producer_epoch), (meta.last_producer_id, meta.last_producer_epoch)):
            return ErrorCode.producer_fenced, -1, -1
        if meta.state is TxnState.ONGOING or meta.state is TxnState.PREPARE_EPOCH_FENCE:
            await self._fence_and_abort(meta)
            return ErrorCode.concurrent_transactions, -1, -1
        if (expected_pid != -1 and (expected_pid, expected_epoch) == (meta.last_producer_id, meta.last_producer_epoch)
                and meta.state is TxnState.EMPTY):
            return ErrorCode.none, meta.producer_id, meta.producer_epoch  # a retry of a bump that succeeded
        pid, epoch = meta.producer_id, meta.producer_epoch + 1
        if epoch >= MAX_EPOCH:
            code, pid = await self._new_producer_id()
            if code != ErrorCode.none:
                return code, -1, -1
            epoch = 0
        code = await self._write(meta, TxnState.EMPTY, epoch=epoch, producer_id=pid, partitions=set(), start_ms=-1,
                                 timeout_ms=timeout_ms)
        if code != ErrorCode.none:
            if meta.producer_epoch < 0 and self.txns.get(transactional_id) is meta:
                del self.txns[transactional_id]  # never written: forget the unborn id
            return code, -1, -1
        return ErrorCode.none, meta.producer_id, meta.producer_epoch

    async def _new_producer_id(self) -> tuple[ErrorCode, int]:
        """A producer id from the broker's block, or why there is none: while no block can be had
        Kafka's generateProducerId fails with COORDINATOR_LOAD_IN_PROGRESS, which InitProducerId
        answers (the client retries) before it writes anything for the id."""
        try:
            return ErrorCode.none, await self.allocate_producer_id()
        except KafkaError as exc:
            return exc.code, -1

    async def _fence_and_abort(self, meta: TxnMetadata) -> ErrorCode:
        """prepareFenceProducerEpoch then endTransaction(abort) with the bumped epoch."""
        if meta.state is TxnState.ONGOING:
            epoch = meta.producer_epoch + 1 if meta.producer_epoch < MAX_EPOCH - 1 else meta.producer_epoch
            code = await self._write(meta, TxnState.PREPARE_EPOCH_FENCE, epoch=epoch)
            if code != ErrorCode.none:
                return code
        return await self._prepare(meta, commit=False)

    # --- AddPartitionsToTxn, AddOffsetsToTxn ------------------------------------------------------------
    async def _settled(self, transactional_id: str) -> ErrorCode:
        """Where fauxka goes further: Kafka answers CONCURRENT_TRANSACTIONS while the previous
        transaction's markers are being written and the client retries after its backoff (librdkafka:
        tens of ms); fauxka first waits up to SETTLE_S for them, so the next transaction starts
        at once. The answer is the same, only sooner. What it returns is the id's coordinator status
        after the wait: the partition may have moved away meanwhile (its ids unloaded), which Kafka
        answers NOT_COORDINATOR, not the INVALID_PRODUCER_ID_MAPPING of an unknown id."""
        settle = self._settles.get(transactional_id)
        if settle is None:
            return ErrorCode.none
        try:
            async with asyncio.timeout(SETTLE_S):  # not wait_for: tests/unit/test_cancellation_safety.py
                await settle.wait()
        except TimeoutError:
            pass
        return self.status(transactional_id)

    def _check(self, transactional_id: str, producer_id: int, epoch: int) -> tuple[ErrorCode, TxnMetadata | None]:
        meta = self.txns.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping, None
        if epoch != meta.producer_epoch:
            return ErrorCode.producer_fenced, None
        if meta.pending or meta.state in PREPARING or meta.state is TxnState.PREPARE_EPOCH_FENCE:
            return ErrorCode.concurrent_transactions, None
        return ErrorCode.none, meta

    async def add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                             partitions: set[TopicPartition]) -> ErrorCode:
        code = await self._settled(transactional_id)
        if code != ErrorCode.none:
            return code
        code, meta = self._check(transactional_id, producer_id, epoch)
        if meta is None:
            return code
        if meta.state is TxnState.ONGOING and partitions <= meta.partitions:
            return ErrorCode.none
        start = meta.start_ms if meta.state is TxnState.ONGOING else now_ms()
        return await self._write(meta, TxnState.ONGOING, partitions=meta.partitions | partitions, start_ms=start)

    # --- EndTxn ---------------------------------------------------------------------------------------
    async def end_txn(self, transactional_id: str, producer_id: int, epoch: int, commit: bool) -> ErrorCode:
        meta = self.txns.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if epoch != meta.producer_epoch:
            return ErrorCode.producer_fenced
        if meta.pending:
            return ErrorCode.concurrent_transactions
        if meta.state is TxnState.ONGOING:
            return await self._prepare(meta, commit)
        if meta.state in COMPLETE:
            return ErrorCode.none if (meta.state is TxnState.COMPLETE_COMMIT) == commit else ErrorCode.invalid_txn_state
        if meta.state in PREPARING:
            return (ErrorCode.concurrent_transactions if (meta.state is TxnState.PREPARE_COMMIT) == commit
                    else ErrorCode.invalid_txn_state)
        return ErrorCode.invalid_txn_state

    async def _prepare(self, meta: TxnMetadata, commit: bool) -> ErrorCode:
        code = await self._write(meta, TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT)
        if code == ErrorCode.none:
            self.complete_later(meta)
        return code

    def complete_later(self, meta: TxnMetadata) -> None:
        """Write the markers, then Complete*: a task owned here (cancelled by unload / close)."""
        transactional_id = meta.transactional_id
        if transactional_id not in self._tasks:
            settle = self._settles[transactional_id] = asyncio.Event()
            task = asyncio.get_running_loop().create_task(
                self._complete(meta, lambda: self._settle(transactional_id, task, settle)),
                name=f"txn-markers-{transactional_id}")
            self._tasks[transactional_id] = task
            task.add_done_callback(lambda _t: self._settle(transactional_id, task, settle))

    def _settle(self, transactional_id: str, task: asyncio.Task, settle: asyncio.Event) -> None:
        """Complete* took effect (or the task ended): the next transaction may start; the task may
        still wait for the record's replication (kept in _trailing, cancelled by close)."""
        settle.set()
        if self._tasks.get(transactional_id) is task:
            del self._tasks[transactional_id]
        if self._settles.get(transactional_id) is settle:
            del self._settles[transactional_id]
        if task.done():
            self._trailing.discard(task)
        else:
            self._trailing.add(task)

    async def _complete(self, meta: TxnMetadata, settled: Callable[[], None]) -> None:
        commit = meta.state is TxnState.PREPARE_COMMIT
        effective, started = False, time.monotonic()

        def took_effect() -> None:
            nonlocal effective
            effective = True
            settled()
        while self.txns.get(meta.transactional_id) is meta and meta.state in PREPARING:
            try:
                await self.markers.send_markers(meta.producer_id, meta.producer_epoch, commit,
                                                self.runtime.coordinator_epoch(meta.transactional_id),
                                                set(meta.partitions))
                self.stats.markers_written(time.monotonic() - started)
                code = await self._write(meta, TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT,
                                         partitions=set(), early=took_effect)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # retried: the transaction must complete once
                code = ErrorCode.unknown_server_error
                if self._logger is not None:
                    self._logger.exception("completing a transaction failed", transactional_id=meta.transactional_id,
                                           error=repr(exc))
            if effective or code == ErrorCode.none:
                self.stats.completed[commit] += 1
                return  # once in effect, never again: the id may be in its next transaction already
            if code == ErrorCode.not_coordinator:
                return
            await asyncio.sleep(0.1)

    # --- the timeout ----------------------------------------------------------------------------------
    async def abort_timed_out(self, now: int | None = None) -> int:
        now = now_ms() if now is None else now
        doomed = [m for m in self.txns.values()
                  if m.state is TxnState.ONGOING and not m.pending and m.start_ms + m.timeout_ms < now]
        self.stats.timed_out += len(doomed)
        for meta in doomed:
            if self._logger is not None:
                self._logger.info("aborting a timed-out transaction", transactional_id=meta.transactional_id,
                                  producer_id=meta.producer_id, epoch=meta.producer_epoch)
            await self._fence_and_abort(meta)
        return len(doomed)

    # --- transactional.id.expiration.ms ---------------------------------------------------------------
    async def expire_ids(self, expiration_ms: int, now: int | None = None) -> int:
        """transactional.id.expiration.ms (removeExpiredTransactionalIds): an id idle that long in
        Empty / CompleteCommit / CompleteAbort is removed with a tombstone."""
        now = now_ms() if now is None else now
        doomed = [m for m in self.txns.values()
                  if (m.state is TxnState.EMPTY or m.state in COMPLETE) and not m.pending
                  and m.update_ms <= now - expiration_ms]
        for meta in doomed:
            meta.pending = True
            try:
                code = await self.runtime.write_batch(meta.transactional_id, [(encode_key(meta.transactional_id), None)])
            finally:
                meta.pending = False
            if code == ErrorCode.none and self.txns.get(meta.transactional_id) is meta:
                del self.txns[meta.transactional_id]
        return len(doomed)

    # --- loading and unloading: the runtime's shard -----------------------------------------------------
    def replay_record(self, partition: int, key: bytes | None, value: bytes | None, producer_id: int = -1,
                      marker: bool | None = None) -> None:
        self.replay(key, value, producer_id, marker)

    def replay(self, key: bytes | None, value: bytes | None, producer_id: int = -1, marker: bool | None = None) -> None:
        if key is None or marker is not None:
            return
        transactional_id = decode_key(key)
        if transactional_id is None:
            return
        if value is None:
            self.txns.pop(transactional_id, None)
            return
        v = decode_value(value)
        old = self.txns.get(transactional_id)
        meta = TxnMetadata(transactional_id, v.producer_id, v.producer_epoch, v.timeout_ms, TxnState(v.status),
                           {(t, p) for t, ps in v.partitions.items() for p in ps}, v.start_ms, v.last_update_ms)
        if old is not None and (old.producer_id, old.producer_epoch) != (meta.producer_id, meta.producer_epoch):
            meta.last_producer_id, meta.last_producer_epoch = old.producer_id, old.producer_epoch
        self.txns[transactional_id] = meta

    def partition_loaded(self, partition: int) -> dict:
        mine = [t for t in self.txns if self.runtime.partition_of(t) == partition]
        self.loaded(mine)
        return {"ids": len(mine)}

    def loaded(self, transactional_ids: list[str]) -> None:
        """After a replay: transactions found mid-commit/abort are completed (markers resent);
        a fence found half-way is aborted."""
        for transactional_id in transactional_ids:
            meta = self.txns.get(transactional_id)
            if meta is not None and meta.state in PREPARING:
                self.complete_later(meta)
            elif meta is not None and meta.state is TxnState.PREPARE_EPOCH_FENCE:
                task = asyncio.get_running_loop().create_task(self._fence_and_abort(meta))
                self._tasks.setdefault(f"fence:{transactional_id}", task)
                task.add_done_callback(lambda _t, i=f"fence:{transactional_id}": self._tasks.pop(i, None))

    def partition_unloaded(self, partition: int) -> None:
        self.unload(lambda transactional_id: self.runtime.partition_of(transactional_id) != partition)

    def unload(self, keep: Callable[[str], bool]) -> None:
        for transactional_id in [t for t in self.txns if not keep(t)]:
            del self.txns[transactional_id]
            task = self._tasks.pop(transactional_id, None)
            if task is not None:
                task.cancel()

    async def close(self) -> None:
        tasks = [*self._tasks.values(), *self._trailing]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.txns.clear()


def _apply(meta: TxnMetadata, new: TxnMetadata) -> None:
    if new.producer_id != meta.producer_id or new.producer_epoch != meta.producer_epoch:
        meta.last_producer_id, meta.last_producer_epoch = meta.producer_id, meta.producer_epoch
    meta.producer_id, meta.producer_epoch, meta.timeout_ms = new.producer_id, new.producer_epoch, new.timeout_ms
    meta.state, meta.partitions, meta.start_ms, meta.update_ms = new.state, new.partitions, new.start_ms, new.update_ms


def _to_value(meta: TxnMetadata) -> TxnLogValue:
    return TxnLogValue(meta.producer_id, meta.producer_epoch, meta.timeout_ms, int(meta.state),
                       meta.partitions_by_topic(), meta.update_ms, meta.start_ms)
