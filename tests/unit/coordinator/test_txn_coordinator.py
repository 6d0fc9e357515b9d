"""The transaction coordinator's rules over an in-memory log and marker sender: Kafka's record
formats, the state machine, fencing by a new InitProducerId, the timeout's abort, and completing
a transaction found half-done when a partition is loaded."""

import asyncio

from fauxka.coordinator.txn.coordinator import TransactionCoordinator
from fauxka.coordinator.txn.records import TxnLogValue, decode_key, decode_value, encode_key, encode_value
from fauxka.coordinator.txn.state import TxnState
from fauxka.model.errors import ErrorCode, KafkaError


class Log:
    def __init__(self):
        self.records: list[tuple[bytes, bytes | None]] = []
        self.timeouts: list[int | None] = []  # each append's replication timeout
        self.fail = ErrorCode.none
        self.owner = ErrorCode.none  # the id's partition: loaded here (NONE), moved away, loading

    def status(self, transactional_id):
        return self.owner

    async def write_batch(self, transactional_id, records, *, producer=None, appended=None, timeout_ms=None):
        self.timeouts.append(timeout_ms)
        if self.fail != ErrorCode.none:
            return self.fail
        self.records.extend(records)
        if appended is not None:
            appended()
        return ErrorCode.none

    def coordinator_epoch(self, transactional_id):
        return 7


class Markers:
    def __init__(self):
        self.sent: list[tuple] = []

    async def send_markers(self, pid, epoch, commit, coordinator_epoch, partitions):
        self.sent.append((pid, epoch, commit, coordinator_epoch, sorted(partitions)))


def _coordinator(log=None, markers=None):
    ids = iter(range(1000, 2000))

    async def allocate():
        return next(ids)
    return TransactionCoordinator(log or Log(), allocate, markers or Markers(), max_timeout_ms=60000)


def _states(log: Log) -> list[str]:
    return [TxnState(decode_value(v).status).display for _, v in log.records]


def test_records_in_kafkas_format():
    key = encode_key("tid")
    assert key == b"\x00\x00\x00\x03tid" and decode_key(key) == "tid"
    v = TxnLogValue(5, 2, 60000, int(TxnState.ONGOING), {"t": [0, 2], "u": [1]}, 1234, 1000)
    data = encode_value(v)
    assert data[:2] == b"\x00\x00"  # value version 0, as Kafka 3.9 writes without transaction.version 1
    assert decode_value(data) == v
    empty = encode_value(TxnLogValue(5, 3, 60000, int(TxnState.EMPTY), {}, 1, -1))
    assert empty[2 + 8 + 2 + 4 + 1:2 + 8 + 2 + 4 + 1 + 4] == b"\xff\xff\xff\xff"  # Empty: a null partition list


def test_flexible_value_v1_is_read():
    body = (b"\x00\x01" + (9).to_bytes(8, "big") + (1).to_bytes(2, "big") + (100).to_bytes(4, "big") + b"\x01"
            + bytes([2]) + bytes([2]) + b"t" + bytes([2]) + (4).to_bytes(4, "big") + b"\x00"
            + (11).to_bytes(8, "big") + (10).to_bytes(8, "big") + b"\x00")
    assert decode_value(body) == TxnLogValue(9, 1, 100, 1, {"t": [4]}, 11, 10)


def test_commit_goes_through_prepare_markers_and_complete():
    async def body():
        log, markers = Log(), Markers()
        tc = _coordinator(log, markers)
        assert await tc.init_producer_id("tid", 30000) == (ErrorCode.none, 1000, 0)
        assert await tc.add_partitions("tid", 1000, 0, {("t", 0), ("t", 1)}) == ErrorCode.none
        assert await tc.add_partitions("tid", 1000, 0, {("t", 1)}) == ErrorCode.none  # nothing new: no write
        assert await tc.end_txn("tid", 1000, 0, True) == ErrorCode.none
        assert tc.txns["tid"].state in (TxnState.PREPARE_COMMIT, TxnState.COMPLETE_COMMIT)
        await asyncio.sleep(0.01)
        assert markers.sent == [(1000, 0, True, 7, [("t", 0), ("t", 1)])]
        assert _states(log) == ["Empty", "Ongoing", "PrepareCommit", "CompleteCommit"]
        assert await tc.end_txn("tid", 1000, 0, True) == ErrorCode.none  # a retried EndTxn
        assert await tc.end_txn("tid", 1000, 0, False) == ErrorCode.invalid_txn_state
        assert await tc.init_producer_id("tid", 30000) == (ErrorCode.none, 1000, 1)  # the epoch bump
        assert await tc.add_partitions("tid", 1000, 0, {("t", 0)}) == ErrorCode.producer_fenced
        assert await tc.add_partitions("tid", 999, 1, {("t", 0)}) == ErrorCode.invalid_producer_id_mapping
        await tc.close()
    asyncio.run(body())


def test_a_new_init_fences_an_open_transaction_and_aborts_it():
    async def body():
        log, markers = Log(), Markers()
        tc = _coordinator(log, markers)
        await tc.init_producer_id("tid", 30000)
        await tc.add_partitions("tid", 1000, 0, {("t", 0)})
        assert await tc.init_producer_id("tid", 30000) == (ErrorCode.concurrent_transactions, -1, -1)
        await asyncio.sleep(0.01)
        assert markers.sent == [(1000, 1, False, 7, [("t", 0)])]  # aborted with the bumped epoch
        assert _states(log)[-3:] == ["PrepareEpochFence", "PrepareAbort", "CompleteAbort"]
        assert await tc.init_producer_id("tid", 30000) == (ErrorCode.none, 1000, 2)
        assert await tc.end_txn("tid", 1000, 0, True) == ErrorCode.producer_fenced  # the zombie
        await tc.close()
    asyncio.run(body())


def test_kip360_expected_epoch_and_bad_timeouts():
    async def body():
        tc = _coordinator()
        assert (await tc.init_producer_id("tid", 0))[0] == ErrorCode.invalid_transaction_timeout
        assert (await tc.init_producer_id("tid", 60001))[0] == ErrorCode.invalid_transaction_timeout
        assert (await tc.init_producer_id("", 1000))[0] == ErrorCode.invalid_request
        await tc.init_producer_id("tid", 1000)
        assert await tc.init_producer_id("tid", 1000, 1000, 0) == (ErrorCode.none, 1000, 1)
        assert await tc.init_producer_id("tid", 1000, 1000, 0) == (ErrorCode.none, 1000, 1)  # retried bump
        assert (await tc.init_producer_id("tid", 1000, 1000, 5))[0] == ErrorCode.producer_fenced
        await tc.close()
    asyncio.run(body())


def test_no_producer_id_block_answers_coordinator_load_in_progress_and_writes_nothing():
    """The broker's producer id block cannot be had (the controller unreachable): InitProducerId of a
    new transactional id answers the allocation's retriable error instead of failing the request."""
    async def body():
        log, blocks = Log(), [KafkaError(ErrorCode.coordinator_load_in_progress), 4000]

        async def allocate():
            block = blocks.pop(0)
            if isinstance(block, Exception):
                raise block
            return block
        tc = TransactionCoordinator(log, allocate, Markers(), max_timeout_ms=60000)
        assert await tc.init_producer_id("tid", 1000) == (ErrorCode.coordinator_load_in_progress, -1, -1)
        assert tc.txns == {} and log.records == []
        assert await tc.init_producer_id("tid", 1000) == (ErrorCode.none, 4000, 0)  # the client's retry
        await tc.close()
    asyncio.run(body())


def test_state_changes_wait_for_replication_up_to_the_transactions_timeout():
    """appendTransactionToLog's timeout is the transaction's own (a loaded follower is waited for,
    not answered COORDINATOR_NOT_AVAILABLE after a few seconds); a tombstone's is request.timeout.ms."""
    async def body():
        log = Log()
        tc = _coordinator(log)
        await tc.init_producer_id("tid", 45000)
        await tc.add_partitions("tid", 1000, 0, {("t", 0)})
        await tc.init_producer_id("idle", 30000)
        assert log.timeouts == [45000, 45000, 30000]
        assert await tc.expire_ids(0, now=10 ** 15) == 1  # "idle" only: "tid" has a transaction open
        assert log.timeouts[-1] is None
        await tc.close()
    asyncio.run(body())


def test_timed_out_transaction_is_aborted_with_a_bumped_epoch():
    async def body():
        log, markers = Log(), Markers()
        tc = _coordinator(log, markers)
        await tc.init_producer_id("tid", 1000)
        await tc.add_partitions("tid", 1000, 0, {("t", 3)})
        start = tc.txns["tid"].start_ms
        assert await tc.abort_timed_out(start + 999) == 0
        assert await tc.abort_timed_out(start + 1001) == 1
        await asyncio.sleep(0.01)
        assert markers.sent == [(1000, 1, False, 7, [("t", 3)])]
        assert tc.txns["tid"].state is TxnState.COMPLETE_ABORT
        assert await tc.end_txn("tid", 1000, 0, True) == ErrorCode.producer_fenced
        await tc.close()
    asyncio.run(body())


def test_a_failed_append_changes_nothing():
    async def body():
        log = Log()
        tc = _coordinator(log)
        await tc.init_producer_id("tid", 1000)
        log.fail = ErrorCode.not_enough_replicas
        assert await tc.add_partitions("tid", 1000, 0, {("t", 0)}) == ErrorCode.coordinator_not_available
        assert tc.txns["tid"].state is TxnState.EMPTY and not tc.txns["tid"].partitions
        await tc.close()
    asyncio.run(body())


def test_loading_completes_a_transaction_left_in_prepare_commit():
    async def body():
        log, markers = Log(), Markers()
        tc = _coordinator(log, markers)
        await tc.init_producer_id("tid", 30000)
        await tc.add_partitions("tid", 1000, 0, {("t", 0)})
        meta = tc.txns["tid"]
        await tc._write(meta, TxnState.PREPARE_COMMIT)  # the coordinator died before its markers
        written = list(log.records)
        await tc.close()
        again_markers = Markers()
        again = _coordinator(log, again_markers)
        for k, v in written:
            again.replay(k, v)
        assert again.txns["tid"].state is TxnState.PREPARE_COMMIT
        assert again.txns["tid"].last_producer_epoch == -1 or again.txns["tid"].producer_epoch == 0
        again.loaded(["tid"])
        await asyncio.sleep(0.01)
        assert again_markers.sent == [(1000, 0, True, 7, [("t", 0)])]
        assert again.txns["tid"].state is TxnState.COMPLETE_COMMIT and not again.txns["tid"].partitions
        again.unload(lambda _: False)
        assert again.txns == {}
        await again.close()
    asyncio.run(body())


def test_idle_ids_expire_with_a_tombstone_but_not_an_open_transaction():
    async def body():
        log = Log()
        tc = _coordinator(log)
        await tc.init_producer_id("idle", 1000)
        await tc.init_producer_id("busy", 1000)
        await tc.add_partitions("busy", 1001, 0, {("t", 0)})
        later = max(m.update_ms for m in tc.txns.values()) + 5000
        assert await tc.expire_ids(10000, later) == 0
        assert await tc.expire_ids(5000, later) == 1
        assert list(tc.txns) == ["busy"]
        assert log.records[-1] == (encode_key("idle"), None)
        replayed = _coordinator()
        for k, v in log.records:
            replayed.replay(k, v)
        assert list(replayed.txns) == ["busy"]
        await tc.close()
    asyncio.run(body())


class HeldLog(Log):
    """Complete* records reach the leader's log at once; their "replication" waits for `release`
    and then answers `outcome`."""

    def __init__(self):
        super().__init__()
        self.release = asyncio.Event()
        self.outcome = ErrorCode.none

    async def write_batch(self, transactional_id, records, *, producer=None, appended=None, timeout_ms=None):
        code = await super().write_batch(transactional_id, records, appended=appended, timeout_ms=timeout_ms)
        value = records[-1][1]
        if value is not None and decode_value(value).status in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            await self.release.wait()
            return self.outcome
        return code


def test_the_next_transaction_starts_once_complete_is_on_the_log_not_when_replicated():
    async def body():
        log = HeldLog()
        tc = _coordinator(log)
        await tc.init_producer_id("tid", 30000)
        await tc.add_partitions("tid", 1000, 0, {("t", 0)})
        assert await tc.end_txn("tid", 1000, 0, True) == ErrorCode.none
        # Complete* is appended but held unreplicated: the next transaction's Ongoing goes after it
        assert await tc.add_partitions("tid", 1000, 0, {("t", 1)}) == ErrorCode.none
        assert _states(log) == ["Empty", "Ongoing", "PrepareCommit", "CompleteCommit", "Ongoing"]
        assert tc.txns["tid"].state is TxnState.ONGOING and tc.txns["tid"].partitions == {("t", 1)}
        assert await tc.end_txn("tid", 1000, 0, False) == ErrorCode.none  # its own markers task starts
        log.outcome = ErrorCode.request_timed_out  # an acks=all timeout: in effect already, not rewritten
        log.release.set()
        await asyncio.sleep(0.05)
        assert _states(log) == ["Empty", "Ongoing", "PrepareCommit", "CompleteCommit", "Ongoing", "PrepareAbort",
                                "CompleteAbort"]
        assert tc.txns["tid"].state is TxnState.COMPLETE_ABORT and not tc._trailing and not tc._tasks
        await tc.close()
    asyncio.run(body())


class HeldMarkers(Markers):
    """Markers that wait to be released: the previous transaction is still completing."""

    def __init__(self):
        super().__init__()
        self.release = asyncio.Event()

    async def send_markers(self, *args):
        await self.release.wait()
        await super().send_markers(*args)


def test_a_request_waiting_for_the_previous_markers_while_the_partition_moves_away_is_not_coordinator():
    """Kafka's getTransactionState answers NOT_COORDINATOR once the partition is no longer this
    broker's; an AddPartitionsToTxn (or InitProducerId) waiting for the previous transaction's
    markers when its partition was unloaded found no metadata and answered
    INVALID_PRODUCER_ID_MAPPING, which librdkafka takes for a lost producer id (epoch bump, the
    transaction aborted): seen in a chaos run as a restarted coordinator's last AddPartitionsToTxn."""
    async def body():
        log, markers = Log(), HeldMarkers()
        tc = _coordinator(log, markers)
        await tc.init_producer_id("tid", 30000)
        await tc.add_partitions("tid", 1000, 0, {("t", 0)})
        assert await tc.end_txn("tid", 1000, 0, True) == ErrorCode.none  # markers held
        adding = asyncio.ensure_future(tc.add_partitions("tid", 1000, 0, {("t", 1)}))
        initing = asyncio.ensure_future(tc.init_producer_id("tid", 30000, 1000, 0))
        await asyncio.sleep(0.01)  # both wait for the markers
        log.owner = ErrorCode.not_coordinator
        tc.unload(lambda transactional_id: False)  # the partition's leadership moved away
        assert await adding == ErrorCode.not_coordinator
        assert await initing == (ErrorCode.not_coordinator, -1, -1)
        await tc.close()
    asyncio.run(body())
