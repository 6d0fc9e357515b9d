"""A partition replica's log (Kafka's `UnifiedLog` over `LocalLog`): segments, offsets, the
leader epoch cache and producer state. Synchronous; the caller serialises access per partition.
"""

from __future__ import annotations

import os
import shutil
import time
from bisect import bisect_right
from dataclasses import dataclass

from . import batch as B
from . import records as R
from .config import LogConfig
from .epoch_cache import EpochCache
from .errors import ErrorCode, OffsetOutOfRange, StorageError
from .producer_state import ProducerState
from .segment import Segment
from .store import FileStore
from .validator import validate_follower, validate_leader

MAX_TIMESTAMP = -3  # ListOffsets' "offset of the max timestamp" (KIP-734)
_INT32_MAX = 2147483647


@dataclass
class AppendInfo:
    first_offset: int
    last_offset: int
    log_append_time: int
    log_start_offset: int
    record_count: int
    duplicate: bool = False


def _now_ms() -> int:
    return int(time.time() * 1000)


class PartitionLog:
    def __init__(self, topic: str, partition: int, config: LogConfig, directory: str | None, now_ms: int | None = None):
        """An empty log; `load` opens an existing directory. directory None = in memory."""
        self.topic = topic
        self.partition = partition
        self.config = config
        self.directory = directory
        self.tp = f"{topic}-{partition}"
        if directory is not None:
            os.makedirs(directory, exist_ok=True)
        self.epochs = EpochCache(directory)
        self.producers = ProducerState(self.tp)
        self.segments: list[Segment] = []
        self._bases: list[int] = []
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.recovery_point = 0
        self._high_watermark = 0
        self.closed = False
        self._created_ms = _now_ms() if now_ms is None else now_ms

    # --- loading -------------------------------------------------------------------------

    @classmethod
    def load(
        cls, topic: str, partition: int, config: LogConfig, directory: str | None,
        log_start_offset: int = 0, recovery_point: int = 0, now_ms: int | None = None,
    ) -> PartitionLog:
        """Open a partition directory: recover segments past the recovery point (CRC checked),
        truncating a torn or corrupt tail and dropping every later segment, as Kafka's
        `LogLoader` does; rebuild indexes and producer state from the batch headers."""
        log = cls(topic, partition, config, directory, now_ms)
        if directory is not None:
            bases = []
            for name in os.listdir(directory):
                if name.endswith((".cleaned", ".swap", ".deleted", ".tmp")):
                    os.unlink(os.path.join(directory, name))
                elif name.endswith(".log") and name[:-4].isdigit():
                    bases.append(int(name[:-4]))
            bases.sort()
            for i, base in enumerate(bases):
                store = FileStore(os.path.join(directory, f"{base:020d}.log"))
                seg = Segment(base, store, config.index_interval_bytes, store.mtime_ms() or 0)
                next_base = bases[i + 1] if i + 1 < len(bases) else None
                check = next_base is None or next_base > recovery_point
                cut = seg.recover(check_crc=check)
                log._add_segment(seg)
                if cut:
                    for later in bases[i + 1 :]:
                        os.unlink(os.path.join(directory, f"{later:020d}.log"))
                    break
        if not log.segments:
            start = max(log_start_offset, 0)
            log._add_segment(log._new_segment(start))
        log.log_end_offset = max(log.segments[-1].next_offset, log.segments[-1].base_offset)
        log.log_start_offset = min(max(log_start_offset, log.segments[0].base_offset), log.log_end_offset)
        log.recovery_point = min(recovery_point, log.log_end_offset)
        log.epochs.truncate_from_end(log.log_end_offset)
        log.epochs.truncate_from_start(log.log_start_offset)
        log.epochs.flush()
        log._rebuild_producer_state()
        return log

    def _new_segment(self, base_offset: int, now_ms: int | None = None) -> Segment:
        return Segment.create(
            self.directory, base_offset, self.config.index_interval_bytes,
            _now_ms() if now_ms is None else now_ms,
        )

    def _add_segment(self, seg: Segment) -> None:
        self.segments.append(seg)
        self._bases.append(seg.base_offset)

    def _rebuild_producer_state(self) -> None:
        self.producers.clear()
        for seg in self.segments:
            for h in seg.headers_from(0):
                self._update_producer(seg, h)

    def _update_producer(self, seg_or_buf, h: B.BatchHeader) -> None:
        if not h.has_producer_id:
            return
        control = None
        if h.is_control:
            raw = seg_or_buf.read_batch(h) if isinstance(seg_or_buf, Segment) else seg_or_buf
            start = 0 if isinstance(seg_or_buf, Segment) else h.position
            control = _control_type(raw, B.BatchHeader(raw, start))
        self.producers.update(h, control)

    # --- offsets -------------------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, value: int) -> None:
        self._high_watermark = min(max(value, self.log_start_offset), self.log_end_offset)

    @property
    def last_stable_offset(self) -> int:
        """The high watermark, or the first offset of the oldest ongoing transaction before it."""
        unstable = self.producers.first_unstable_offset()
        return self._high_watermark if unstable is None else min(unstable, self._high_watermark)

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    # --- appending -----------------------------------------------------------------------

    def append_as_leader(self, records: bytes, leader_epoch: int, now_ms: int) -> AppendInfo:
        v = validate_leader(records, self.config, self.log_end_offset, leader_epoch, now_ms, self.tp)
        h = v.headers[0]
        duplicate = self.producers.check(h, self.log_end_offset)
        if duplicate is not None:
            return AppendInfo(
                duplicate.first_offset, duplicate.last_offset,
                duplicate.timestamp if self.config.message_timestamp_type == "LogAppendTime" else -1,
                self.log_start_offset, duplicate.last_offset - duplicate.first_offset + 1, True,
            )
        self._write(v, now_ms)
        return AppendInfo(
            v.first_offset, v.last_offset, v.log_append_time, self.log_start_offset, v.record_count
        )

    def append_as_follower(self, records: bytes) -> AppendInfo:
        v = validate_follower(records, self.tp)
        known = [h for h in v.headers if h.last_offset < self.log_end_offset]
        if known:  # batches this replica already holds (a re-fetch): skip them
            if len(known) == len(v.headers):
                v.headers = []
            else:
                start = v.headers[len(known)].position
                v.buffer = v.buffer[start:]
                v.headers = _rebase(v.headers[len(known) :], start)
        if not v.headers:
            return AppendInfo(-1, -1, -1, self.log_start_offset, 0)
        if v.headers[0].base_offset < self.log_end_offset:
            raise StorageError(
                ErrorCode.unknown_server_error,
                f"Unexpected offset in append to {self.tp}. First offset {v.headers[0].base_offset} "
                f"is less than the next offset {self.log_end_offset}.",
            )
        self._write(v, _now_ms())
        return AppendInfo(v.first_offset, v.last_offset, -1, self.log_start_offset, v.record_count)

    def _write(self, v, now_ms: int) -> None:
        if v.size > self.config.segment_bytes:
            raise StorageError(
                ErrorCode.record_list_too_large,
                f"Message batch size is {v.size} bytes in append to partition {self.tp} which "
                f"exceeds the maximum configured segment size of {self.config.segment_bytes}.",
            )
        first = v.headers[0]
        self._maybe_roll(v.size, first.base_offset, v.last_offset, now_ms)
        for h in v.headers:
            if h.leader_epoch >= 0:
                self.epochs.assign(h.leader_epoch, h.base_offset)
        self.segments[-1].append(v.buffer, v.headers)
        for h in v.headers:
            self._update_producer(v.buffer, h)
        self.log_end_offset = v.last_offset + 1

    def _maybe_roll(self, size: int, first_offset: int, last_offset: int, now_ms: int) -> None:
        """Kafka's `UnifiedLog.maybeRoll`: full segment, segment.ms elapsed, or offsets that
        would overflow the 32-bit relative offsets of the segment's index."""
        active = self.segments[-1]
        if active.empty:
            if active.base_offset != first_offset and first_offset > active.base_offset:
                self._replace_empty_active(first_offset, now_ms)
            return
        if (
            active.size + size > self.config.segment_bytes
            or now_ms - active.rolling_timestamp > self.config.segment_ms
            or last_offset - active.base_offset > _INT32_MAX
        ):
            self.roll(now_ms, first_offset)

    def _replace_empty_active(self, base: int, now_ms: int) -> None:
        self.segments.pop().delete()
        self._bases.pop()
        self._add_segment(self._new_segment(base, now_ms))

    def roll(self, now_ms: int | None = None, base_offset: int | None = None) -> Segment:
        """Start a new active segment at the log end offset (or base_offset)."""
        base = self.log_end_offset if base_offset is None else max(base_offset, self.log_end_offset)
        active = self.segments[-1]
        if active.empty:
            self._replace_empty_active(base, now_ms or _now_ms())
        else:
            active.flush()
            self._add_segment(self._new_segment(base, now_ms))
        return self.segments[-1]

    # --- reading -------------------------------------------------------------------------

    def read(self, start_offset: int, max_bytes: int, max_offset: int, min_one_batch: bool) -> bytes:
        if not self.log_start_offset <= start_offset <= self.log_end_offset:
            raise OffsetOutOfRange(
                f"Received request for offset {start_offset} for partition {self.tp}, but we "
                f"only have log segments in the range {self.log_start_offset} to {self.log_end_offset}."
            )
        max_offset = min(max_offset, self.log_end_offset)
        i = max(bisect_right(self._bases, start_offset) - 1, 0)
        for seg in self.segments[i:]:
            if seg.next_offset <= start_offset or seg.empty:
                continue
            if seg.base_offset >= max_offset:
                break
            return seg.read(start_offset, max_bytes, max_offset, min_one_batch)
        return b""

    def offset_for_timestamp(self, timestamp_ms: int) -> tuple[int, int, int] | None:
        """Kafka's `fetchOffsetByTimestamp`: the first record with timestamp >= timestamp_ms,
        or for -3 the record with the largest timestamp: (offset, timestamp, leader_epoch)."""
        if timestamp_ms == MAX_TIMESTAMP:
            live = [s for s in self.segments if s.max_timestamp >= 0]
            if not live:
                return None
            seg = max(live, key=lambda s: s.max_timestamp)
            h = seg.find(seg.max_timestamp_batch_offset)
            best = None
            for r in R.decode(seg.read_batch(h), B.BatchHeader(seg.read_batch(h), 0)):
                if best is None or r.timestamp > best.timestamp:
                    best = r
            return h.base_offset + best.offset_delta, best.timestamp, h.leader_epoch
        for seg in self.segments:
            if seg.max_timestamp < timestamp_ms or seg.next_offset <= self.log_start_offset:
                continue
            h = seg.find_timestamp(timestamp_ms)
            while h is not None:
                raw = seg.read_batch(h)
                for r in R.decode(raw, B.BatchHeader(raw, 0)):
                    offset = h.base_offset + r.offset_delta
                    if r.timestamp >= timestamp_ms and offset >= self.log_start_offset:
                        return offset, r.timestamp, h.leader_epoch
                h = next((x for x in seg.headers_from(h.position + h.size) if x.max_timestamp >= timestamp_ms), None)
        return None

    # --- epochs and producers ------------------------------------------------------------

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        self.epochs.assign(epoch, start_offset)
        self.epochs.flush()

    def latest_epoch(self) -> int | None:
        return self.epochs.latest_epoch()

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        return self.epochs.end_offset_for(epoch, self.log_end_offset)

    def last_producer_state(self, producer_id: int) -> tuple[int, int, int] | None:
        entry = self.producers.last_entry(producer_id)
        return None if entry is None else (entry.epoch, entry.last_seq, entry.last_offset)

    # --- truncation and deletion ---------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Kafka's `UnifiedLog.truncateTo`: drop every batch from the one holding offset."""
        if offset >= self.log_end_offset:
            return
        if offset < self.segments[0].base_offset:
            self.truncate_fully_and_start_at(offset)
            return
        while len(self.segments) > 1 and self.segments[-1].base_offset >= offset:
            self.segments.pop().delete()
            self._bases.pop()
        active = self.segments[-1]
        h = active.find(offset)
        end = h.base_offset if h is not None and h.base_offset < offset else offset
        active.truncate_to(offset)
        self.log_end_offset = max(min(end, offset), active.base_offset)
        self.log_start_offset = min(self.log_start_offset, self.log_end_offset)
        self.recovery_point = min(self.recovery_point, self.log_end_offset)
        self.epochs.truncate_from_end(self.log_end_offset)
        self.epochs.flush()
        self._rebuild_producer_state()
        self.high_watermark = self._high_watermark

    def truncate_fully_and_start_at(self, offset: int) -> None:
        for seg in self.segments:
            seg.delete()
        self.segments, self._bases = [], []
        self._add_segment(self._new_segment(offset))
        self.log_start_offset = self.log_end_offset = self.recovery_point = offset
        self._high_watermark = offset
        self.epochs.clear()
        self.epochs.flush()
        self.producers.clear()

    def advance_log_start_offset(self, offset: int) -> None:
        """DeleteRecords (Kafka's `maybeIncrementLogStartOffset`)."""
        if offset > self._high_watermark:
            raise OffsetOutOfRange(
                f"Cannot increment the log start offset to {offset} of partition {self.tp} "
                f"since it is larger than the high watermark {self._high_watermark}"
            )
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        self.epochs.truncate_from_start(offset)
        self.epochs.flush()
        self.delete_segments_before(offset)

    def delete_segments_before(self, offset: int) -> int:
        """Delete the oldest segments whose every offset is below `offset` (never the active)."""
        n = 0
        while len(self.segments) > 1 and self.segments[1].base_offset <= offset:
            self.segments.pop(0).delete()
            self._bases.pop(0)
            n += 1
        if n:
            self.log_start_offset = max(self.log_start_offset, self.segments[0].base_offset)
        return n

    # --- durability ----------------------------------------------------------------------

    def flush(self) -> None:
        """fsync segments past the recovery point and move it to the log end offset."""
        for seg in self.segments:
            if seg.next_offset > self.recovery_point or seg is self.segments[-1]:
                seg.flush()
        self.recovery_point = self.log_end_offset
        self.epochs.flush()

    def close(self) -> None:
        if self.closed:
            return
        self.flush()
        for seg in self.segments:
            seg.close()
        self.closed = True

    def delete(self) -> None:
        for seg in self.segments:
            seg.delete()
        self.segments, self._bases = [], []
        self.closed = True
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


def _rebase(headers: list[B.BatchHeader], start: int) -> list[B.BatchHeader]:
    for h in headers:
        h.position -= start
    return headers


def _control_type(buf, h: B.BatchHeader) -> int | None:
    """A control batch's record key: version int16, type int16 (0 abort, 1 commit)."""
    try:
        key = R.decode(buf, h)[0].key or b""
        return int.from_bytes(key[2:4], "big") if len(key) >= 4 else None
    except (StorageError, IndexError):
        return None
