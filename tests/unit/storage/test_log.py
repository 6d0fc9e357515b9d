"""fauxka/storage/log.py: append, read, offsets, truncation and epochs, in memory and on disk."""

import pytest

from fauxka.model.errors import ErrorCode
from fauxka.storage import batch as B
from fauxka.storage.config import LogConfig
from fauxka.storage.errors import OffsetOutOfRange, StorageError
from tests.unit.storage.helpers import now_ms, records_of, v2


def fill(log, batches=5, n=10, codec=0, epoch=0):
    for _ in range(batches):
        log.append_as_leader(v2(n, codec), epoch, now_ms())


def test_append_assigns_consecutive_offsets(make_log):
    log = make_log()
    infos = [log.append_as_leader(v2(3, c), 0, now_ms()) for c in range(5)]
    assert [(i.first_offset, i.last_offset, i.record_count) for i in infos] == [
        (0, 2, 3), (3, 5, 3), (6, 8, 3), (9, 11, 3), (12, 14, 3)
    ]
    assert log.log_end_offset == 15 and log.size_bytes > 0
    assert [r[0] for r in records_of(log.read(0, 10**6, 15, True))] == list(range(15))


def test_read_returns_whole_batches_within_limits(make_log):
    log = make_log()
    fill(log, 4, 10)
    size = B.BatchHeader(log.read(0, 10**6, 40, True)).size
    assert records_of(log.read(15, 10**6, 40, True))[0][0] == 10  # the batch holding 15
    assert len(log.read(0, size * 2 + 5, 40, True)) == size * 2
    assert log.read(0, 10, 40, False) == b""
    assert len(log.read(0, 10, 40, True)) == size  # at least one batch
    assert len(log.read(0, 10**6, 25, True)) == size * 2  # batch 20-29 ends past 25
    assert log.read(40, 10**6, 40, True) == b""


def test_tail_reads_after_appends_and_truncations(make_log):
    """Reads at and inside the newest batch (the segment starts them there, not at its index
    entry) give the same batches as reads from anywhere else, also after a truncation."""
    log = make_log(LogConfig(index_interval_bytes=len(v2(10)) * 3))
    fill(log, 7)

    def first_record(offset):
        return records_of(log.read(offset, 10**6, log.log_end_offset, True))[0][0]
    assert [first_record(o) for o in (69, 65, 60, 59, 30, 0)] == [60, 60, 60, 50, 30, 0]
    log.truncate_to(45)  # the batch 40-49 goes: 30-39 is the newest again
    assert log.log_end_offset == 40 and [first_record(o) for o in (39, 30, 29)] == [30, 30, 20]
    assert log.read(40, 10**6, 40, True) == b""
    fill(log, 1)
    assert [first_record(o) for o in (49, 40, 39)] == [40, 40, 30]
    log.truncate_to(5)
    assert log.log_end_offset == 0 and log.read(0, 10**6, 0, True) == b""
    fill(log, 2)
    assert [first_record(o) for o in (19, 10, 9, 0)] == [10, 10, 0, 0]


def test_read_out_of_range(make_log):
    log = make_log()
    fill(log, 1)
    with pytest.raises(OffsetOutOfRange) as info:
        log.read(11, 100, 100, True)
    assert info.value.code == ErrorCode.offset_out_of_range


def test_segments_roll_and_reads_cross_them(make_log):
    one = len(v2(10))
    log = make_log(LogConfig(segment_bytes=one * 2 + 1))
    fill(log, 7, 10)
    assert [s.base_offset for s in log.segments] == [0, 20, 40, 60]
    got = []
    offset = 0
    while offset < log.log_end_offset:
        data = log.read(offset, 10**6, log.log_end_offset, True)
        recs = records_of(data)
        got += [r[0] for r in recs]
        offset = recs[-1][0] + 1
    assert got == list(range(70))


def test_record_list_too_large_against_segment_bytes(make_log):
    log = make_log(LogConfig(segment_bytes=100))
    with pytest.raises(StorageError) as info:
        log.append_as_leader(v2(5), 0, now_ms())
    assert info.value.code == ErrorCode.record_list_too_large


def test_high_watermark_is_clamped(make_log):
    log = make_log()
    fill(log, 2)
    log.high_watermark = 100
    assert log.high_watermark == 20 == log.last_stable_offset
    log.high_watermark = -5
    assert log.high_watermark == 0


def test_epochs_follow_appends(make_log):
    log = make_log()
    fill(log, 2, epoch=1)
    fill(log, 1, epoch=3)
    assert log.latest_epoch() == 3
    assert log.end_offset_for_epoch(1) == (1, 20)
    assert log.end_offset_for_epoch(2) == (1, 20)
    assert log.end_offset_for_epoch(3) == (3, 30)
    assert log.end_offset_for_epoch(0) == (0, 0)
    assert log.end_offset_for_epoch(4) == (-1, -1)
    log.assign_epoch(5, 30)
    assert log.end_offset_for_epoch(3) == (3, 30) and log.latest_epoch() == 5


def test_truncate_to_drops_batches_and_epochs(make_log):
    log = make_log(LogConfig(segment_bytes=len(v2(10)) * 2 + 1))
    fill(log, 3, epoch=1)
    fill(log, 3, epoch=2)
    log.high_watermark = 60
    log.truncate_to(30)
    assert log.log_end_offset == 30 and log.high_watermark == 30
    assert log.latest_epoch() == 1
    assert [r[0] for r in records_of(log.read(0, 10**6, 30, True))][-1] == 19
    log.truncate_to(25)  # mid-batch: the whole batch 20-29 goes
    assert log.log_end_offset == 20
    fill(log, 1, epoch=4)
    assert log.log_end_offset == 30 and log.end_offset_for_epoch(1) == (1, 20)


def test_truncate_fully_and_start_at(make_log):
    log = make_log()
    fill(log, 2, epoch=1)
    log.truncate_fully_and_start_at(500)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (500, 500, 500)
    assert log.latest_epoch() is None
    assert log.append_as_leader(v2(2), 2, now_ms()).first_offset == 500
    assert log.end_offset_for_epoch(2) == (2, 502)


def test_follower_append_keeps_leader_offsets(make_log):
    leader, follower = make_log(name="l-0"), make_log(name="f-0")
    fill(leader, 3, epoch=4)
    data = leader.read(0, 10**6, 30, True)
    info = follower.append_as_follower(data)
    assert (info.first_offset, info.last_offset, info.record_count) == (0, 29, 30)
    assert follower.log_end_offset == 30 and follower.latest_epoch() == 4
    assert follower.append_as_follower(data).record_count == 0  # a re-fetch adds nothing
    assert follower.read(0, 10**6, 30, True) == data
    follower.truncate_to(10)
    info = follower.append_as_follower(data)  # overlapping: only 10-29 are new
    assert (info.first_offset, info.last_offset) == (10, 29)
    assert follower.read(0, 10**6, 30, True) == data


def test_follower_append_with_gap_after_compaction(make_log):
    follower = make_log()
    buf = bytearray(v2(2))
    B.set_base_offset(buf, 0, 100)
    follower.truncate_fully_and_start_at(90)
    follower.append_as_follower(bytes(buf))
    assert follower.log_end_offset == 102


def test_offset_for_timestamp(make_log):
    log = make_log()
    for i in range(4):
        log.append_as_leader(v2(3, i, ts=1000 + 100 * i), 2, now_ms())
    assert log.offset_for_timestamp(1000) == (0, 1000, 2)
    assert log.offset_for_timestamp(1101) == (4, 1101, 2)
    assert log.offset_for_timestamp(1150) == (6, 1200, 2)
    assert log.offset_for_timestamp(5000) is None
    assert log.offset_for_timestamp(-3) == (11, 1302, 2)


def test_advance_log_start_offset(make_log):
    log = make_log(LogConfig(segment_bytes=len(v2(10)) + 1))
    fill(log, 4)
    with pytest.raises(OffsetOutOfRange):
        log.advance_log_start_offset(5)  # above the high watermark
    log.high_watermark = 40
    log.advance_log_start_offset(25)
    assert log.log_start_offset == 25 and log.segments[0].base_offset == 20
    with pytest.raises(OffsetOutOfRange):
        log.read(24, 100, 40, True)
    assert records_of(log.read(25, 10**6, 40, True))[0][0] == 20


def test_log_append_time_info(make_log):
    log = make_log(LogConfig(message_timestamp_type="LogAppendTime"))
    info = log.append_as_leader(v2(2, 4, ts=1), 0, 123456)
    assert info.log_append_time == 123456
    assert [r[1] for r in records_of(log.read(0, 10**6, 2, True))] == [123456, 123456]


def test_segment_ms_rolls_by_the_batches_timestamps(make_log):
    """Kafka's shouldRoll: incoming max timestamp minus the segment's first batch's."""
    log = make_log(LogConfig(segment_ms=1000))
    old = now_ms() - 10**9
    log.append_as_leader(v2(1, ts=old), 0, now_ms())
    log.append_as_leader(v2(1, ts=old + 500), 0, now_ms())  # historical data: no roll
    assert len(log.segments) == 1
    log.append_as_leader(v2(1, ts=old + 1500), 0, now_ms())
    assert [s.base_offset for s in log.segments] == [0, 2]
