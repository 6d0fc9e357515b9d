"""Restart recovery and checkpoints (LogManager over real files)."""

import os

from fauxka.storage import checkpoint
from fauxka.storage.config import LogConfig
from fauxka.storage.epoch_cache import EpochCache
from fauxka.storage.log import PartitionLog
from fauxka.storage.log_manager import LogManager
from tests.unit.storage.helpers import now_ms, records_of, v2


def seg_path(d, base=0):
    return os.path.join(d, f"{base:020d}.log")


def test_on_disk_layout(tmp_path):
    lm = LogManager([str(tmp_path)])
    lm.load()
    log = lm.get_or_create("orders", 3, LogConfig())
    log.append_as_leader(v2(2), 5, now_ms())
    lm.checkpoint()
    d = tmp_path / "orders-3"
    assert sorted(os.listdir(d)) == ["00000000000000000000.log", "leader-epoch-checkpoint"]
    assert (d / "leader-epoch-checkpoint").read_text() == "0\n1\n5 0\n"
    assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == "0\n1\norders 3 2\n"
    assert (tmp_path / "log-start-offset-checkpoint").read_text() == "0\n1\norders 3 0\n"
    data = open(seg_path(d), "rb").read()
    assert [r[0] for r in records_of(data)] == [0, 1]


def test_torn_tail_is_truncated(tmp_path):
    d = str(tmp_path / "t-0")
    log = PartitionLog.load("t", 0, LogConfig(), d)
    for _ in range(3):
        log.append_as_leader(v2(3, 3), 1, now_ms())
    good = log.size_bytes
    log.close()
    with open(seg_path(d), "ab") as f:
        f.write(v2(3)[:40])
    log = PartitionLog.load("t", 0, LogConfig(), d)
    assert log.log_end_offset == 9 and log.size_bytes == good
    assert log.append_as_leader(v2(1), 1, now_ms()).first_offset == 9


def test_corrupt_batch_truncates_it_and_what_follows(tmp_path):
    d = str(tmp_path / "t-0")
    one = len(v2(3))
    log = PartitionLog.load("t", 0, LogConfig(segment_bytes=one * 3 + 1), d)
    for _ in range(5):
        log.append_as_leader(v2(3), 2, now_ms())
    assert [s.base_offset for s in log.segments] == [0, 9]
    log.close()
    with open(seg_path(d), "r+b") as f:  # flip a byte in the second batch of segment 0
        f.seek(one + 70)
        b = f.read(1)
        f.seek(one + 70)
        f.write(bytes([b[0] ^ 0xFF]))
    log = PartitionLog.load("t", 0, LogConfig(), d)
    assert log.log_end_offset == 3 and len(log.segments) == 1
    assert not os.path.exists(seg_path(d, 9))
    assert log.end_offset_for_epoch(2) == (2, 3)


def test_segments_below_the_recovery_point_skip_crc(tmp_path):
    d = str(tmp_path / "t-0")
    one = len(v2(3))
    log = PartitionLog.load("t", 0, LogConfig(segment_bytes=one + 1), d)
    for _ in range(3):
        log.append_as_leader(v2(3), 0, now_ms())
    log.close()
    with open(seg_path(d), "r+b") as f:
        f.seek(70)
        f.write(b"\xff")
    assert PartitionLog.load("t", 0, LogConfig(), d, recovery_point=9).log_end_offset == 9
    assert PartitionLog.load("t", 0, LogConfig(), d, recovery_point=0).log_end_offset == 0


def test_manager_round_trip(tmp_path):
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    lm = LogManager(dirs)
    lm.load()
    for p in range(4):
        log = lm.get_or_create("t", p, LogConfig())
        log.append_as_leader(v2(p + 1), 1, now_ms())
        log.high_watermark = p
    lm.write_meta_properties(2, "abc")
    lm.close()
    lm = LogManager(dirs)
    lm.load()
    assert lm.partitions() == [("t", p) for p in range(4)]
    assert {lm.log_dir_of("t", p) for p in range(4)} == set(dirs)
    assert [lm.get("t", p).log_end_offset for p in range(4)] == [1, 2, 3, 4]
    assert [lm.get("t", p).high_watermark for p in range(4)] == [0, 1, 2, 3]
    assert lm.read_high_watermarks() == {("t", p): p for p in range(4)}
    assert lm.read_meta_properties() == {"cluster.id": "abc", "version": "0", "broker.id": "2"}
    lm.write_high_watermarks({("t", 0): 1, ("x", 0): 5})
    assert lm.read_high_watermarks() == {("t", 0): 1, ("t", 1): 1, ("t", 2): 2, ("t", 3): 3}
    lm.delete("t", 1)
    assert lm.get("t", 1) is None and not any(os.path.exists(os.path.join(d, "t-1")) for d in dirs)


def test_in_memory_manager_has_no_files(tmp_path):
    lm = LogManager([str(tmp_path / "never")], in_memory=True)
    lm.load()
    log = lm.get_or_create("t", 0, LogConfig())
    log.append_as_leader(v2(2), 0, now_ms())
    log.high_watermark = 2
    lm.checkpoint()
    assert lm.read_high_watermarks() == {("t", 0): 2}
    lm.close()
    assert not os.path.exists(tmp_path / "never")


def test_checkpoint_files_round_trip(tmp_path):
    path = str(tmp_path / "replication-offset-checkpoint")
    offsets = {("a", 0): 5, ("b-c", 12): 0, ("a", 1): 99}
    checkpoint.write_offsets(path, offsets)
    assert checkpoint.read_offsets(path) == offsets
    cache = EpochCache(str(tmp_path))
    cache.assign(0, 0)
    cache.assign(2, 10)
    cache.assign(1, 12)  # a lower epoch later replaces what it conflicts with, as Kafka's assign
    cache.flush()
    assert EpochCache(str(tmp_path)).entries() == [(0, 0), (1, 12)]


def test_descriptors_stay_bounded(tmp_path, monkeypatch):
    from fauxka.storage.store import FileStore

    monkeypatch.setattr(FileStore, "MAX_OPEN", 4)
    lm = LogManager([str(tmp_path)])
    lm.load()
    for p in range(12):
        lm.get_or_create("many", p, LogConfig()).append_as_leader(v2(2), 0, now_ms())
    assert sum(1 for s in FileStore._open if s.path.startswith(str(tmp_path))) <= 4
    for p in range(12):
        assert len(records_of(lm.get("many", p).read(0, 10**6, 2, True))) == 2
    lm.close()
    lm = LogManager([str(tmp_path)])
    lm.load()
    assert [lm.get("many", p).log_end_offset for p in range(12)] == [2] * 12
    lm.close()


def test_any_damage_to_the_tail_recovers_to_a_valid_prefix(tmp_path):
    """Hypothesis: cut or scribble anywhere in the active segment; load keeps exactly the
    batches before the damage. (The base offset and the leader epoch lie outside the CRC, as
    in Kafka: damage there is out of this test's reach.)"""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    d = str(tmp_path / "t-0")
    log = PartitionLog.load("t", 0, LogConfig(), d)
    sizes = []
    for i in range(6):
        log.append_as_leader(v2(3, i % 5), 0, now_ms())
        sizes.append(log.size_bytes)
    log.close()
    pristine = open(seg_path(d), "rb").read()

    @settings(max_examples=60, deadline=None)
    @given(st.integers(0, len(pristine) - 1), st.booleans(), st.integers(1, 255))
    def damaged(at, cut, xor):
        start = max([0] + [s for s in sizes if s <= at])
        if not cut and (at - start < 8 or 12 <= at - start < 16):
            return
        data = bytearray(pristine)
        if cut:
            del data[at:]
        else:
            data[at] ^= xor
        with open(seg_path(d), "wb") as f:
            f.write(data)
        log = PartitionLog.load("t", 0, LogConfig(), d)
        intact = sum(1 for s in sizes if s <= at)
        assert log.log_end_offset == 3 * intact
        assert len(records_of(log.read(0, 10**7, 100, True))) == 3 * intact
        log.close()

    damaged()


def test_lost_epoch_checkpoint_heals_from_the_batches(tmp_path):
    d = str(tmp_path / "t-0")
    log = PartitionLog.load("t", 0, LogConfig(), d)
    for epoch in (1, 1, 4, 6):
        log.append_as_leader(v2(2), epoch, now_ms())
    log.close()
    with open(os.path.join(d, "leader-epoch-checkpoint"), "w") as f:
        f.write("garbage\n")
    log = PartitionLog.load("t", 0, LogConfig(), d)
    assert log.epochs.entries() == [(1, 0), (4, 4), (6, 6)]
    assert log.end_offset_for_epoch(5) == (4, 6)


def test_truncation_uses_the_producer_snapshot_of_a_roll(make_log):
    log = make_log(LogConfig(segment_bytes=len(v2(2, pid=1, epoch=0, seq=0)) * 2 + 1))
    for i in range(6):
        log.append_as_leader(v2(2, pid=1, epoch=0, seq=2 * i), 0, now_ms())
    assert len(log.segments) == 3 and len(log._snapshots) == 2
    log.truncate_to(9)
    assert log.last_producer_state(1) == (0, 7, 7)
    log.truncate_to(2)
    assert log.last_producer_state(1) == (0, 1, 1) and log._snapshots == []


def test_checkpoint_fsyncs_in_another_thread(tmp_path):
    import threading

    lm = LogManager([str(tmp_path)])
    lm.load()
    log = lm.get_or_create("t", 0, LogConfig(segment_bytes=len(v2(2)) + 1))
    for _ in range(3):
        log.append_as_leader(v2(2), 0, now_ms())
    job = lm.begin_checkpoint()
    worker = threading.Thread(target=job.run)
    worker.start()
    for _ in range(3):  # appends and rolls go on meanwhile
        log.append_as_leader(v2(2), 0, now_ms())
    worker.join(10)
    job.finish()
    assert log.recovery_point == 6
    assert checkpoint.read_offsets(str(tmp_path / "recovery-point-offset-checkpoint")) == {("t", 0): 6}
    lm.checkpoint()
    assert log.recovery_point == 12
    lm.close()


def test_partition_metadata_replaces_a_log_of_an_earlier_topic(tmp_path):
    import uuid

    old, new = uuid.uuid4(), uuid.uuid4()
    lm = LogManager([str(tmp_path)])
    lm.load()
    lm.get_or_create("t", 0, LogConfig(), topic_id=old).append_as_leader(v2(3), 0, now_ms())
    text = (tmp_path / "t-0" / "partition.metadata").read_text()
    assert text.startswith("version: 0\ntopic_id: ") and "=" not in text
    lm.close()
    lm = LogManager([str(tmp_path)])
    lm.load()
    assert lm.get("t", 0).topic_id == old
    assert lm.get_or_create("t", 0, LogConfig(), topic_id=old).log_end_offset == 3
    log = lm.get_or_create("t", 0, LogConfig(), topic_id=new)  # deleted and recreated meanwhile
    assert (log.log_end_offset, log.topic_id) == (0, new)
    lm.close()
