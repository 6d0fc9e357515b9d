"""ListOffsets v0's offsets before a time (Kafka 3.9 `UnifiedLog.legacyFetchOffsetsBefore`).

Kafka answers v0 from segment boundaries, not from record timestamps: one (offset, last
modified) pair per segment (its base offset, at least the log start offset) plus, when the active
segment holds bytes, (log end offset, now). LATEST (-1) starts at the last pair, EARLIEST (-2) at
the first, any other time at the last pair modified at or before it; from there up to
`max_num_offsets` offsets are taken walking back, in descending order. A segment's last modified
time is its file's mtime (an in-memory segment: its creation time).
"""

from __future__ import annotations

LATEST, EARLIEST = -1, -2


def legacy_offsets_before(log, timestamp: int, max_num_offsets: int, now_ms: int) -> list[int]:
    segments = list(log.segments)
    pairs = [(max(s.base_offset, log.log_start_offset), _last_modified(s)) for s in segments]
    if segments and segments[-1].size > 0:
        pairs.append((log.log_end_offset, now_ms))
    if timestamp == LATEST:
        start = len(pairs) - 1
    elif timestamp == EARLIEST:
        start = 0
    else:
        start = len(pairs) - 1
        while start >= 0 and pairs[start][1] > timestamp:
            start -= 1
    count = max(min(max_num_offsets, start + 1), 0)
    return sorted((pairs[start - j][0] for j in range(count)), reverse=True)


def _last_modified(segment) -> int:
    mtime = segment.store.mtime_ms()
    return segment.created_ms if mtime is None else mtime
