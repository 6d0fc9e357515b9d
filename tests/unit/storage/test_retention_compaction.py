"""Retention (retention.ms / retention.bytes / log start offset) and compaction."""

from fauxka.storage.config import LogConfig
from tests.unit.storage.helpers import now_ms, records_of, v2


def one_batch_segments(make_log, **config):
    return make_log(LogConfig(segment_bytes=len(v2(5)) + 1, **config))


def read_all(log):
    out, offset = [], log.log_start_offset
    while offset < log.high_watermark:
        recs = records_of(log.read(offset, 10**6, log.high_watermark, True))
        if not recs:
            break
        out += recs
        offset = recs[-1][0] + 1
    return out


def test_retention_ms_deletes_old_segments_below_the_high_watermark(make_log):
    log = one_batch_segments(make_log, retention_ms=1000)
    now = now_ms()
    for i in range(4):
        log.append_as_leader(v2(5, ts=now - 10_000 + i * 3000), 0, now)
    log.high_watermark = 10
    from fauxka.storage.retention import retention_pass

    assert retention_pass(log, now) == 2  # only below the high watermark
    assert log.log_start_offset == 10
    log.high_watermark = 20
    assert retention_pass(log, now) == 1  # 10-14 are 4 s old; the active 15-19 is under 1 s
    assert retention_pass(log, now + 10_000) == 1
    assert log.log_start_offset == 20 and log.log_end_offset == 20
    assert log.append_as_leader(v2(1), 0, now).first_offset == 20


def test_retention_bytes(make_log):
    log = one_batch_segments(make_log, retention_bytes=len(v2(5)) * 2)
    for _ in range(5):
        log.append_as_leader(v2(5), 0, now_ms())
    log.high_watermark = 25
    from fauxka.storage.retention import retention_pass

    assert retention_pass(log, now_ms()) == 3
    assert log.log_start_offset == 15 and log.size_bytes <= len(v2(5)) * 2


def test_compaction_keeps_latest_per_key_and_expires_tombstones(make_log):
    log = one_batch_segments(make_log, cleanup_policy=frozenset({"compact"}), delete_retention_ms=1000)
    now = now_ms()
    log.append_as_leader(v2(5, keys=[b"a", b"b", b"a", b"c", b"b"], ts=now - 5000), 0, now)
    log.roll(now)
    log.append_as_leader(v2(5, 3, keys=[b"a", b"d", b"d", b"e", b"c"], values=[b"1", None, b"2", None, b"3"], ts=now - 5000), 0, now)
    log.roll(now)
    log.append_as_leader(v2(1, keys=[b"z"]), 0, now)
    log.high_watermark = 11
    from fauxka.storage.cleaner import clean

    removed = clean(log, now)
    recs = read_all(log)
    assert [(r[0], r[2], r[3]) for r in recs] == [(4, b"b", b"v" * 100), (5, b"a", b"1"), (7, b"d", b"2"), (9, b"c", b"3"), (10, b"z", b"v" * 100)]
    assert removed == 6  # e's tombstone is older than delete.retention.ms
    assert clean(log, now) == 0  # nothing new to clean
    assert log.append_as_leader(v2(1, keys=[b"q"]), 0, now).first_offset == 11


def test_compaction_keeps_fresh_tombstones(make_log):
    log = one_batch_segments(make_log, cleanup_policy=frozenset({"compact"}))
    now = now_ms()
    log.append_as_leader(v2(2, keys=[b"a", b"a"], values=[b"x", None]), 0, now)
    log.roll(now)
    log.append_as_leader(v2(1, keys=[b"b"]), 0, now)
    log.high_watermark = 3
    from fauxka.storage.cleaner import clean

    assert clean(log, now) == 1
    assert [(r[0], r[3]) for r in read_all(log)] == [(1, None), (2, b"v" * 100)]


def test_manager_passes(tmp_path):
    from fauxka.storage.log_manager import LogManager

    lm = LogManager([str(tmp_path)])
    lm.load()
    config = LogConfig(segment_bytes=len(v2(5)) + 1, retention_ms=0)
    log = lm.get_or_create("t", 0, config)
    for _ in range(3):
        log.append_as_leader(v2(5, ts=1), 0, now_ms())
    log.high_watermark = 15
    assert lm.retention_pass(now_ms()) == 3
    assert lm.cleaner_pass(now_ms()) == 0
    for _ in range(2):
        log.append_as_leader(v2(5, ts=1), 0, now_ms())
    log.high_watermark = 25
    lm.close()
    lm = LogManager([str(tmp_path)])
    lm.load()
    assert lm.get("t", 0).log_start_offset == 15
    assert lm.retention_pass(now_ms()) == 0  # no topic config yet: nothing is deleted
    lm.get_or_create("t", 0, config)
    assert lm.retention_pass(now_ms()) == 2


def test_compaction_keeps_an_empty_last_batch_per_producer(make_log):
    log = one_batch_segments(make_log, cleanup_policy=frozenset({"compact"}))
    now = now_ms()
    log.append_as_leader(v2(2, pid=4, epoch=0, seq=0, keys=[b"a", b"b"]), 0, now)
    log.roll(now)
    log.append_as_leader(v2(2, keys=[b"a", b"b"]), 0, now)
    log.roll(now)
    log.append_as_leader(v2(1, keys=[b"z"]), 0, now)
    log.high_watermark = 5
    from fauxka.storage import batch as B
    from fauxka.storage.cleaner import clean

    assert clean(log, now) == 2
    first = log.read(0, 10**6, 5, True)
    h = B.BatchHeader(first)
    assert (h.record_count, h.producer_id, h.last_offset, len(first)) == (0, 4, 1, B.HEADER_SIZE)
    assert h.crc_ok(first) and records_of(first) == []
    log.truncate_to(4)
    assert log.last_producer_state(4) == (0, 1, 1)
    assert log.append_as_leader(v2(2, pid=4, epoch=0, seq=0, keys=[b"a", b"b"]), 0, now).duplicate


def test_cleaning_waits_for_the_dirty_ratio(make_log):
    keys = [[f"k{j}-{i}".encode() for i in range(5)] for j in range(4)]
    log = make_log(LogConfig(segment_bytes=len(v2(5, keys=keys[0])) + 1, cleanup_policy=frozenset({"compact"})))
    now = now_ms()
    for j in range(4):
        log.append_as_leader(v2(5, keys=keys[j]), 0, now)
    log.high_watermark = log.log_end_offset
    from fauxka.storage.cleaner import clean

    assert clean(log, now) == 0 and log.cleaned_up_to == 15  # 0-14 cleaned, nothing to drop
    log.append_as_leader(v2(5, keys=keys[0]), 0, now)  # supersedes offsets 0-4
    log.roll(now)
    log.high_watermark = log.log_end_offset
    assert clean(log, now) == 0  # dirty 15-24 is 2 of 5 segments: under 0.5
    log.config = LogConfig(cleanup_policy=frozenset({"compact"}), min_cleanable_dirty_ratio=0.3)
    assert clean(log, now) == 5


def test_cleaning_rewrites_only_the_segments_that_lose_records(tmp_path):
    """A cleaner pass rewrites (new file, fsync, rename) only a segment it removes records from: the
    others keep their files. Rewriting every segment of every compacted log on each pass blocked the
    broker's event loop for seconds (librdkafka's 0077, a log of 100+ segments: Produce timed out)."""
    import os

    from fauxka.storage.cleaner import clean
    from fauxka.storage.log import PartitionLog

    keys = [[f"k{j}-{i}".encode() for i in range(5)] for j in range(4)]
    config = LogConfig(segment_bytes=len(v2(5, keys=keys[0])) + 1, cleanup_policy=frozenset({"compact"}),
                       min_cleanable_dirty_ratio=0.01)
    log = PartitionLog.load("t", 0, config, str(tmp_path / "t-0"))
    now = now_ms()
    for j in range(4):
        log.append_as_leader(v2(5, keys=keys[j]), 0, now)
    log.append_as_leader(v2(5, keys=keys[0]), 0, now)  # supersedes offsets 0-4
    log.roll(now)
    log.high_watermark = log.log_end_offset

    def inodes():
        return [os.stat(seg.store.path).st_ino for seg in log.segments]

    before = inodes()
    assert clean(log, now) == 5
    after = inodes()
    assert after[0] != before[0]  # offsets 0-4 went: a new file
    assert after[1:] == before[1:]  # 5-24 lost nothing: the same files
    assert [r[0] for r in read_all(log)] == list(range(5, 25))


def test_cleaning_in_steps_leaves_a_log_truncated_meanwhile(make_log):
    """clean_steps yields after each segment it reads (the broker serves requests meanwhile); when
    the log is truncated between two steps, the pass rewrites nothing and the next one cleans."""
    from fauxka.storage.cleaner import clean, clean_steps

    keys = [[f"k{j}-{i}".encode() for i in range(5)] for j in range(4)]
    config = LogConfig(segment_bytes=len(v2(5, keys=keys[0])) + 1, cleanup_policy=frozenset({"compact"}),
                       min_cleanable_dirty_ratio=0.01)
    log = make_log(config)
    now = now_ms()
    for j in range(4):
        log.append_as_leader(v2(5, keys=keys[j]), 0, now)
    log.append_as_leader(v2(5, keys=keys[0]), 0, now)  # supersedes offsets 0-4
    log.append_as_leader(v2(1, keys=[b"z"]), 0, now)
    log.roll(now)
    log.high_watermark = log.log_end_offset
    steps = clean_steps(log, now)
    next(steps)
    next(steps)  # two of the six segments read
    log.truncate_to(20)  # 20-25 go: a follower's truncation
    log.high_watermark = 20
    try:
        while True:
            next(steps)
    except StopIteration as done:
        assert done.value == 0
    assert [r[0] for r in read_all(log)] == list(range(20))
    assert clean(log, now) == 0  # 20-24 went with the truncation: nothing supersedes 0-4 now
    log.append_as_leader(v2(5, keys=keys[0]), 0, now)
    log.append_as_leader(v2(1, keys=[b"z"]), 0, now)
    log.roll(now)
    log.high_watermark = log.log_end_offset
    assert clean(log, now) == 5
