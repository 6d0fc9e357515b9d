"""Kafka's delete retention (`UnifiedLog.deleteOldSegments`): by retention.ms, retention.bytes
and the log start offset, only ever segments wholly below the high watermark."""

from __future__ import annotations


def _largest_timestamp(seg) -> int:
    return seg.max_timestamp if seg.max_timestamp >= 0 else seg.created_ms


def retention_pass(log, now_ms: int) -> int:
    """Delete what retention allows; returns the number of segments deleted."""
    deleted = 0
    config = log.config
    if config.delete:
        if config.retention_ms >= 0:
            deleted += _delete_while(
                log, now_ms, lambda seg, _: now_ms - _largest_timestamp(seg) > config.retention_ms
            )
        if config.retention_bytes >= 0:
            excess = [log.size_bytes - config.retention_bytes]

            def over(seg, _):
                if excess[0] - seg.size >= 0:
                    excess[0] -= seg.size
                    return True
                return False

            deleted += _delete_while(log, now_ms, over)
    return deleted + delete_below_log_start(log, now_ms)


def delete_below_log_start(log, now_ms: int = 0) -> int:
    """Segments whose every offset is below the log start offset (after DeleteRecords)."""
    return _delete_while(
        log, now_ms, lambda seg, nxt: nxt is not None and nxt.base_offset <= log.log_start_offset
    )


def _delete_while(log, now_ms: int, predicate) -> int:
    """Kafka's `deleteOldSegments(predicate)`: the oldest segments for which predicate holds
    and whose offsets are all below the high watermark; an all-deletable log rolls first so
    that the active segment can go too."""
    count = 0
    for i, seg in enumerate(log.segments):
        nxt = log.segments[i + 1] if i + 1 < len(log.segments) else None
        upper = nxt.base_offset if nxt is not None else log.log_end_offset
        if (nxt is None and seg.empty) or upper > log.high_watermark or not predicate(seg, nxt):
            break
        count += 1
    if not count:
        return 0
    if count == len(log.segments):
        log.roll(now_ms)
    for _ in range(count):
        log.segments.pop(0).delete()
        log._bases.pop(0)
    start = log.segments[0].base_offset
    if start > log.log_start_offset:
        log.log_start_offset = start
        log.epochs.truncate_from_start(start)
        log.epochs.flush()
    return count
