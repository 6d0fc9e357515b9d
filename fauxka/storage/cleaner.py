"""Log compaction for cleanup.policy=compact (Kafka's `LogCleaner`, simplified): once the
dirty share of the cleanable range reaches min.cleanable.dirty.ratio, below the first
uncleanable offset (the active segment, the last stable offset, min.compaction.lag.ms)
keep the latest record per key; tombstones go once older than delete.retention.ms; records
keep their offsets; batches keep codec, producer fields and their last offset."""

from __future__ import annotations

from . import batch as B
from . import records as R
from .segment import Segment


def _cleanable(log, now_ms: int) -> list[Segment]:
    limit = min(log.segments[-1].base_offset, log.last_stable_offset)
    out = []
    for seg in log.segments[:-1]:
        if seg.next_offset > limit:
            break
        lag = log.config.min_compaction_lag_ms
        if lag > 0 and seg.max_timestamp >= 0 and now_ms - seg.max_timestamp < lag:
            break
        out.append(seg)
    return out


def clean(log, now_ms: int) -> int:
    """Compact `log` once; returns the number of records removed."""
    steps = clean_steps(log, now_ms)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def clean_steps(log, now_ms: int):
    """`clean` in steps (a generator; its return value is the records removed): it yields after
    reading each segment, so that a caller on an event loop can serve requests meanwhile (Kafka's
    cleaner is a thread of its own; a pass over a log of 100+ gzip segments takes seconds here).
    The caller must not resume it once the log is closed or deleted. The segments are rewritten
    in the last step, without a yield, and only if they are still the log's, as they were read:
    a truncation or a deletion meanwhile leaves the log to the next pass."""
    if not log.config.compact:
        return 0
    segments = _cleanable(log, now_ms)
    total = sum(seg.size for seg in segments)
    dirty = sum(seg.size for seg in segments if seg.next_offset > log.cleaned_up_to)
    if not dirty or dirty < total * log.config.min_cleanable_dirty_ratio:
        return 0  # Kafka's min.cleanable.dirty.ratio: not worth a pass yet
    sizes = [seg.size for seg in segments]
    latest: dict[bytes, int] = {}
    decoded: list[list[tuple[B.BatchHeader, bytes, list | None]]] = []
    for seg, size in zip(segments, sizes):
        if not _unchanged(log, seg, size):
            return 0  # truncated, deleted or cleaned since the last step: the next pass will see
        batches = []
        for h in seg.headers_from(0):
            raw = seg.read_batch(h)
            if h.is_control:
                batches.append((h, raw, None))
                continue
            recs = R.decode(raw, B.BatchHeader(raw, 0))
            batches.append((h, raw, recs))
            for r in recs:
                if r.key is not None:
                    latest[r.key] = h.base_offset + r.offset_delta
        decoded.append(batches)
        yield
    if not all(_unchanged(log, seg, size) for seg, size in zip(segments, sizes)):
        return 0
    removed = 0
    for seg, batches in zip(segments, decoded):
        out = bytearray()
        changed = False
        for h, raw, recs in batches:
            if recs is None:  # a control batch
                out += raw
                continue
            keep = [
                r for r in recs
                if r.key is not None
                and latest.get(r.key) == h.base_offset + r.offset_delta
                and not (r.value is None and _tombstone_expired(r, h, log, now_ms))
            ]
            removed += len(recs) - len(keep)
            if len(keep) == len(recs):
                out += raw
                continue
            changed = True
            if keep:
                out += _rebuild(keep, h)
            elif _producers_last(log, h):  # Kafka keeps it, empty, for the producer's state
                out += _empty(h)
        if changed:  # a segment that loses nothing keeps its file (no rewrite, no fsync)
            seg_replace(log, seg, out)
    log.cleaned_up_to = segments[-1].next_offset
    return removed


def _unchanged(log, seg: Segment, size: int) -> bool:
    """Whether `seg` is still one of the log's segments, of the size it had when the pass began."""
    return seg.size == size and any(s is seg for s in log.segments)


def _tombstone_expired(r, h, log, now_ms: int) -> bool:
    ts = r.timestamp if r.timestamp >= 0 else h.max_timestamp
    return ts >= 0 and now_ms - ts > log.config.delete_retention_ms


def _producers_last(log, h: B.BatchHeader) -> bool:
    entry = log.producers.last_entry(h.producer_id) if h.has_producer_id else None
    return entry is not None and entry.last_offset == h.last_offset


def _empty(h: B.BatchHeader) -> bytearray:
    """A batch with no records that keeps the producer fields and offset range."""
    buf = bytearray(B.HEADER_SIZE)
    B.HEADER.pack_into(
        buf, 0, h.base_offset, B.HEADER_SIZE - B.LOG_OVERHEAD, h.leader_epoch, 2, 0,
        h.attributes & ~B.CODEC_MASK, h.last_offset_delta, h.first_timestamp, h.max_timestamp,
        h.producer_id, h.producer_epoch, h.base_sequence, 0,
    )
    B.recompute_crc(buf, 0, len(buf))
    return buf


def _rebuild(keep, h: B.BatchHeader) -> bytearray:
    buf = R.build(
        keep, h.codec, transactional=h.is_transactional, producer_id=h.producer_id,
        producer_epoch=h.producer_epoch, base_sequence=h.base_sequence,
    )
    size = len(buf)
    B.set_base_offset(buf, 0, h.base_offset)
    B.set_leader_epoch(buf, 0, h.leader_epoch)
    B.set_last_offset_delta(buf, 0, size, h.last_offset_delta)
    if h.log_append_time:
        B.set_max_timestamp(buf, 0, size, True, h.max_timestamp)
    return buf


def seg_replace(log, seg: Segment, data: bytearray) -> None:
    """Swap a segment's bytes for `data` (a `.cleaned` file renamed over the `.log`)."""
    store = seg.store
    if log.directory is None:
        store.truncate(0)
        store.append(data)
    else:
        from .store import FileStore

        path = store.path
        tmp = FileStore(path + ".cleaned")
        tmp.truncate(0)
        tmp.append(data)
        tmp.flush()
        store.close()
        tmp.rename(path)
        seg.store = tmp
    seg.recover(check_crc=False)
