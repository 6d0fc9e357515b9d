"""Idempotent appends (Kafka's ProducerStateManager rules) through PartitionLog."""

import pytest

from fauxka.model.errors import ErrorCode
from fauxka.storage.errors import StorageError
from tests.unit.storage.helpers import now_ms, v2


def send(log, seq, n=2, pid=7, epoch=0, codec=0):
    return log.append_as_leader(v2(n, codec, pid=pid, epoch=epoch, seq=seq), 0, now_ms())


def code_of(fn) -> ErrorCode:
    with pytest.raises(StorageError) as info:
        fn()
    return info.value.code


def test_retried_batch_gets_original_offsets(make_log):
    log = make_log()
    first = send(log, 0)
    send(log, 2)
    again = send(log, 0)
    assert again.duplicate and (again.first_offset, again.last_offset) == (first.first_offset, first.last_offset)
    assert log.log_end_offset == 4
    assert log.last_producer_state(7) == (0, 3, 3)


def test_only_last_five_batches_are_remembered(make_log):
    log = make_log()
    for i in range(7):
        send(log, 2 * i)
    assert send(log, 12).duplicate
    assert code_of(lambda: send(log, 0)) == ErrorCode.out_of_order_sequence_number


def test_gap_is_out_of_order(make_log):
    log = make_log()
    send(log, 0)
    assert code_of(lambda: send(log, 5)) == ErrorCode.out_of_order_sequence_number
    assert log.log_end_offset == 2


def test_older_epoch_is_invalid_producer_epoch(make_log):
    log = make_log()
    send(log, 0, epoch=3)
    assert code_of(lambda: send(log, 2, epoch=2)) == ErrorCode.invalid_producer_epoch


def test_new_epoch_must_start_at_zero(make_log):
    log = make_log()
    send(log, 0, epoch=0)
    assert code_of(lambda: send(log, 4, epoch=1)) == ErrorCode.out_of_order_sequence_number
    assert not send(log, 0, epoch=1).duplicate
    assert log.last_producer_state(7) == (1, 1, 3)


def test_unknown_producer_accepted_at_any_sequence(make_log):
    log = make_log()
    assert send(log, 40).first_offset == 0
    assert send(log, 42).first_offset == 2


def test_sequence_wraps_at_int32_max(make_log):
    log = make_log()
    send(log, 2147483646, n=2)
    assert send(log, 0).first_offset == 2


def test_state_rebuilt_from_the_log(tmp_path):
    from fauxka.storage.config import LogConfig
    from fauxka.storage.log import PartitionLog

    log = PartitionLog.load("t", 0, LogConfig(), str(tmp_path / "t-0"))
    send(log, 0, codec=3)
    send(log, 2, codec=3)
    log.close()
    log = PartitionLog.load("t", 0, LogConfig(), str(tmp_path / "t-0"))
    assert log.last_producer_state(7) == (0, 3, 3)
    assert send(log, 2, codec=3).duplicate
    assert code_of(lambda: send(log, 9)) == ErrorCode.out_of_order_sequence_number


def test_truncation_rebuilds_state(make_log):
    log = make_log()
    send(log, 0)
    send(log, 2)
    log.truncate_to(2)
    assert log.last_producer_state(7) == (0, 1, 1)
    assert not send(log, 2).duplicate


def test_idle_producers_expire(make_log):
    log = make_log()
    send(log, 0)
    assert log.producers.expire(now_ms() + 10_000, 60_000) == 0
    assert log.producers.expire(now_ms() + 70_000, 60_000) == 1
    assert log.last_producer_state(7) is None
    assert send(log, 50).first_offset == 2  # unknown again: any sequence


def test_markers_end_transactions_and_aborts_are_listed(make_log):
    from fauxka.storage.records import build_control_batch

    log = make_log()
    log.append_as_leader(v2(2, pid=9, epoch=0, seq=0, transactional=True), 0, now_ms())
    send(log, 0)
    log.high_watermark = 10
    assert log.last_stable_offset == 0
    with pytest.raises(StorageError) as info:  # a client may not write markers
        log.append_as_leader(bytes(build_control_batch(9, 0, False, 3, now_ms())), 0, now_ms())
    assert info.value.code == ErrorCode.invalid_record
    marker = log.append_as_leader(
        bytes(build_control_batch(9, 0, False, 3, now_ms())), 0, now_ms(), origin="coordinator"
    )
    assert marker.first_offset == 4
    log.high_watermark = 5
    assert log.last_stable_offset == 5
    assert log.aborted_transactions(0, 5) == [(9, 0)]
    assert log.aborted_transactions(5, 9) == []
    log.truncate_to(5)  # producer state rebuilt from the log keeps the abort
    assert log.aborted_transactions(0, 5) == [(9, 0)]


def test_a_marker_from_an_older_coordinator_is_fenced(make_log):
    from fauxka.storage.errors import ErrorCode, StorageError
    from fauxka.storage.records import Record, build, build_control_batch

    log = make_log()
    data = bytes(build([Record(0, 1, None, b"v", [])], 0, transactional=True, producer_id=9, producer_epoch=0,
                       base_sequence=0))
    log.append_as_leader(data, 0, 1)
    log.append_as_leader(bytes(build_control_batch(9, 0, True, 5, 2)), 0, 2, origin="coordinator")
    assert log.producers.last_entry(9).coordinator_epoch == 5
    try:
        log.append_as_leader(bytes(build_control_batch(9, 0, False, 4, 3)), 0, 3, origin="coordinator")
        raise AssertionError("a zombie coordinator's marker was appended")
    except StorageError as exc:
        assert exc.code == ErrorCode.transaction_coordinator_fenced
    log.append_as_leader(bytes(build_control_batch(9, 0, True, 5, 4)), 0, 4, origin="coordinator")  # same epoch
    assert log.log_end_offset == 3


def test_a_completed_transaction_stays_unstable_until_its_marker_is_replicated(make_log):
    """Kafka's unreplicatedTxns: LSO = min(first unstable offset, HW) while the marker is above the HW."""
    from fauxka.storage.records import build_control_batch

    log = make_log()
    send(log, 0)  # offsets 0-1, not transactional
    log.append_as_leader(v2(3, pid=9, epoch=0, seq=0, transactional=True), 0, now_ms())  # 2-4
    log.append_as_leader(bytes(build_control_batch(9, 0, True, 3, now_ms())), 0, now_ms(), origin="coordinator")  # 5
    log.high_watermark = 5  # the records are replicated, the COMMIT marker is not
    assert log.last_stable_offset == 2
    send(log, 2)  # 6-7, then dropped: the producer state rebuilt from the log holds it back too
    log.truncate_to(6)
    log.high_watermark = 5
    assert log.last_stable_offset == 2
    log.high_watermark = 6
    assert log.last_stable_offset == 6
    assert log.producers.unreplicated == []
    log.high_watermark = 5  # never again held back once passed (a follower's HW only moves forward)
    assert log.last_stable_offset == 5


def test_a_coordinator_append_of_an_older_epoch_is_refused(make_log):
    """TxnOffsetCommit's records (origin coordinator, no sequences) still get the epoch check: one
    retried after the coordinator aborted its transaction with a bumped epoch cannot land after the
    ABORT marker, where the next COMMIT of the producer id would commit it."""
    from fauxka.storage.records import Record, build, build_control_batch

    def offsets(epoch):
        return bytes(build([Record(0, 1, b"k", b"v", [])], 0, transactional=True, producer_id=9,
                           producer_epoch=epoch))
    log = make_log()
    log.append_as_leader(offsets(0), 0, 1, origin="coordinator")
    log.append_as_leader(bytes(build_control_batch(9, 1, False, 0, 2)), 0, 2, origin="coordinator")  # timed out
    with pytest.raises(StorageError) as exc:
        log.append_as_leader(offsets(0), 0, 3, origin="coordinator")
    assert exc.value.code == ErrorCode.invalid_producer_epoch and log.log_end_offset == 2
    log.append_as_leader(offsets(2), 0, 4, origin="coordinator")  # the producer's next epoch
    assert log.log_end_offset == 3
