"""ListOffsets v0's segment-boundary answer (Kafka 3.9 UnifiedLog.legacyFetchOffsetsBefore)."""

from fauxka.storage.config import LogConfig
from fauxka.storage.legacy_offsets import legacy_offsets_before
from fauxka.storage.log import PartitionLog

from .helpers import v2


def _log() -> PartitionLog:
    """Segments based at 0, 3 and 6 made at times 1000, 2000 and 3000; log end offset 9."""
    log = PartitionLog.load("t", 0, LogConfig(), None, now_ms=1000)
    for i, created in enumerate((1000, 2000, 3000)):
        if i:
            log.roll(now_ms=created)
        log.append_as_leader(v2(3), 0, created)
    return log


def test_latest_and_earliest():
    log = _log()
    assert legacy_offsets_before(log, -1, 10, 5000) == [9, 6, 3, 0]
    assert legacy_offsets_before(log, -1, 2, 5000) == [9, 6]
    assert legacy_offsets_before(log, -2, 10, 5000) == [0]


def test_a_time_starts_at_the_last_segment_modified_by_then():
    log = _log()
    assert legacy_offsets_before(log, 2500, 10, 5000) == [3, 0]
    assert legacy_offsets_before(log, 3000, 1, 5000) == [6]
    assert legacy_offsets_before(log, 999, 10, 5000) == []
    assert legacy_offsets_before(log, 5000, 10, 5000) == [9, 6, 3, 0]  # (log end, now) counts


def test_log_start_offset_bounds_the_first_segment_and_an_empty_active_segment_adds_nothing():
    log = _log()
    log.high_watermark = 9
    log.advance_log_start_offset(1)
    assert legacy_offsets_before(log, -2, 10, 5000) == [1]
    log.roll(now_ms=4000)
    assert legacy_offsets_before(log, -1, 10, 5000) == [9, 6, 3, 1]
