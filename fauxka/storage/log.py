"""A partition replica's log (Kafka's `UnifiedLog` over `LocalLog`): segments, offsets, the
leader epoch cache and producer state. Synchronous; the caller serialises access per partition.
Its files as a whole (flush, close, move, delete: LocalLog's side) are log_files.py's.
"""

from __future__ import annotations

import os
import time
import uuid
from bisect import bisect_right
from dataclasses import dataclass

from . import batch as B
from .checkpoint import read_partition_metadata, write_partition_metadata
from .config import LogConfig
from .epoch_cache import EpochCache
from .errors import ErrorCode, OffsetOutOfRange, StorageError
from .log_files import LogFiles
from .producer_state import ProducerState
from .retention import delete_below_log_start
from .segment import Segment, open_segments
from .validator import validate_follower, validate_leader

MAX_TIMESTAMP = -3  # ListOffsets' "offset of the max timestamp" (KIP-734)
_SNAPSHOTS = 3  # producer state snapshots kept (one per recent roll)


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


class PartitionLog(LogFiles):
    def __init__(self, topic: str, partition: int, config: LogConfig, directory: str | None, now_ms: int | None = None):
        """An empty log; `load` opens an existing directory. directory None = in memory."""
        self.topic, self.partition, self.config, self.directory = topic, partition, config, directory
        self.tp = f"{topic}-{partition}"
        if directory is not None:
            os.makedirs(directory, exist_ok=True)
        self.epochs = EpochCache(directory)
        self._topic_id = None if directory is None else read_partition_metadata(directory)
        self.producers = ProducerState(self.tp)
        self.segments: list[Segment] = []
        self._bases: list[int] = []
        self.log_start_offset = self.log_end_offset = self.recovery_point = 0
        self._high_watermark = 0
        self.closed = False
        self.configured = True  # False while LogManager.load's default config stands in
        self.cleaned_up_to = -1  # the cleaner's checkpoint: offsets below it are compacted
        self._snapshots: list[tuple[int, ProducerState]] = []  # (segment base, state below it)
        self._created_ms = _now_ms() if now_ms is None else now_ms
        # where the fsyncs of partition.metadata and of a new epoch's checkpoint go (LogManager's
        # list for a worker thread: thousands of leaderships taken at once); None: fsynced at once
        self.defer_sync = None

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
            for seg in open_segments(directory, config.index_interval_bytes, recovery_point, log._replay):
                log._add_segment(seg)
        if not log.segments:
            start = max(log_start_offset, 0)
            log._add_segment(log._new_segment(start))
        log.log_end_offset = max(log.segments[-1].next_offset, log.segments[-1].base_offset)
        log.log_start_offset = min(max(log_start_offset, log.segments[0].base_offset), log.log_end_offset)
        log.recovery_point = min(recovery_point, log.log_end_offset)
        log.epochs.truncate_from_end(log.log_end_offset)
        log.epochs.truncate_from_start(log.log_start_offset)
        log.epochs.flush()
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
        """From the newest in-memory snapshot taken at a segment roll that is still below the
        log end offset (Kafka keeps `.snapshot` files per segment), then the batches after it."""
        while self._snapshots and self._snapshots[-1][0] > self.log_end_offset:
            self._snapshots.pop()
        base, state = self._snapshots[-1] if self._snapshots else (None, None)
        if state is None:
            self.producers.clear()
        else:
            self.producers = state.copy()

        def visit(buf, h, _position) -> bool:
            self._update_producer(buf, h)
            return True

        for seg in self.segments:
            if base is None or seg.base_offset >= base:
                seg.scan(visit)

    def _replay(self, buf, h: B.BatchHeader) -> None:
        """A batch read back on load: producer state, and any epoch newer than the cache's
        (a lost or stale leader-epoch-checkpoint heals from the batches' leader epochs)."""
        self._update_producer(buf, h)
        latest = self.epochs.latest_epoch()
        if h.leader_epoch >= 0 and (latest is None or h.leader_epoch > latest):
            self.epochs.assign(h.leader_epoch, h.base_offset)

    def _update_producer(self, buf, h: B.BatchHeader) -> None:
        """`h.position` is relative to `buf`, which holds the whole batch."""
        if h.has_producer_id:
            self.producers.apply(buf, h)

    # --- offsets -------------------------------------------------------------------------

    @property
    def topic_id(self) -> uuid.UUID | None:
        """The topic id recorded in `partition.metadata` (Kafka's `PartitionMetadataFile`)."""
        return self._topic_id

    @topic_id.setter
    def topic_id(self, value: uuid.UUID) -> None:
        self._topic_id = value
        if self.directory is not None:
            self._written(write_partition_metadata(self.directory, value, sync=self.defer_sync is None))

    def _written(self, path: str | None) -> None:
        if path is not None and self.defer_sync is not None:
            self.defer_sync(path)

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, value: int) -> None:
        self._high_watermark = min(max(value, self.log_start_offset), self.log_end_offset)
        self.producers.on_high_watermark(self._high_watermark)

    @property
    def min_insync_replicas(self) -> int:
        """The topic's min.insync.replicas (acks=all's floor on the ISR)."""
        return self.config.min_insync_replicas

    @property
    def last_stable_offset(self) -> int:
        """min(first unstable offset (ongoing or marker not yet replicated), high watermark)."""
        unstable = self.producers.first_unstable_offset(self._high_watermark)
        return self._high_watermark if unstable is None else min(unstable, self._high_watermark)

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    # --- appending -----------------------------------------------------------------------

    def append_as_leader(
        self, records: bytes, leader_epoch: int, now_ms: int, *, origin: str = "client"
    ) -> AppendInfo:
        """Validate (Kafka's LogValidator), deduplicate (idempotence) and append a producer's
        batch; origin "coordinator" may append control batches (transaction markers) and skips the
        client's sequence checks (ProducerAppendInfo checks them for AppendOrigin.CLIENT only), not
        the producer epoch's."""
        v = validate_leader(
            records, self.config, self.log_end_offset, leader_epoch, now_ms, self.tp, origin
        )
        h = v.headers[0]
        if h.is_control:
            self.producers.check_marker(v.buffer, h)  # and a control batch is never a duplicate
        elif origin == "coordinator":
            self.producers.check_epoch(h, self.log_end_offset)  # no sequences, but the epoch counts
        duplicate = None if h.is_control or origin == "coordinator" else self.producers.check(h, self.log_end_offset)
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
        v = validate_follower(records, self.tp, self.log_end_offset)
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
        headers, size = v.headers, len(v.buffer)
        if size > self.config.segment_bytes:
            raise StorageError(
                ErrorCode.record_list_too_large,
                f"Message batch size is {size} bytes in append to partition {self.tp} which "
                f"exceeds the maximum configured segment size of {self.config.segment_bytes}.",
            )
        first, last = headers[0], headers[-1].last_offset
        self._maybe_roll(size, first.base_offset, last, max(h.max_timestamp for h in headers), now_ms)
        latest = self.epochs.latest_epoch()
        for h in headers:
            if h.leader_epoch >= 0 and h.leader_epoch != latest:
                self.epochs.assign(h.leader_epoch, h.base_offset)
                latest = h.leader_epoch
        if self.epochs.dirty:  # a new epoch: Kafka writes its checkpoint at once
            self.epochs.flush()
        self.segments[-1].append(v.buffer, headers)
        for h in headers:
            self._update_producer(v.buffer, h)
        self.log_end_offset = last + 1

    def _maybe_roll(
        self, size: int, first_offset: int, last_offset: int, max_timestamp: int, now_ms: int
    ) -> None:
        """Kafka's `UnifiedLog.maybeRoll` / `LogSegment.shouldRoll`: full segment; segment.ms
        waited (the incoming batches' max timestamp minus the segment's first batch's, or wall
        time since creation when there is none); or offsets that would overflow the 32-bit
        relative offsets of the segment's index."""
        active = self.segments[-1]
        if active.empty:
            if active.base_offset != first_offset and first_offset > active.base_offset:
                self._replace_empty_active(first_offset, now_ms)
            return
        if active.first_batch_timestamp >= 0:
            waited = max_timestamp - active.first_batch_timestamp
        else:
            waited = now_ms - active.created_ms
        if (
            active.size + size > self.config.segment_bytes
            or waited > self.config.segment_ms
            or last_offset - active.base_offset > B.INT32_MAX
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
        else:  # the old segment is fsynced by the next flush (Kafka flushes it asynchronously)
            self._add_segment(self._new_segment(base, now_ms))
            self._snapshots = self._snapshots[-(_SNAPSHOTS - 1) :] + [(base, self.producers.copy())]
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
            return max(live, key=lambda s: s.max_timestamp).max_timestamp_record() if live else None
        for seg in self.segments:
            if seg.max_timestamp >= timestamp_ms and seg.next_offset > self.log_start_offset:
                found = seg.offset_for_timestamp(timestamp_ms, self.log_start_offset)
                if found is not None:
                    return found
        return None

    # --- epochs and producers ------------------------------------------------------------

    def assign_epoch(self, epoch: int, start_offset: int) -> None:
        """Kafka writes the checkpoint at once on a new epoch: here too, its fsync maybe later (defer_sync)."""
        self.epochs.assign(epoch, start_offset)
        self._written(self.epochs.flush(sync=self.defer_sync is None))

    def latest_epoch(self) -> int | None:
        return self.epochs.latest_epoch()

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        return self.epochs.end_offset_for(epoch, self.log_end_offset)

    def aborted_transactions(self, start_offset: int, upper_offset: int) -> list[tuple[int, int]]:
        """(producer_id, first_offset) of aborted transactions overlapping
        [start_offset, upper_offset): Fetch's read_committed answer (Kafka's txn index)."""
        return [
            (a.producer_id, a.first_offset)
            for a in self.producers.aborted
            if a.last_offset >= start_offset and a.first_offset < upper_offset
        ]

    def last_producer_state(self, producer_id: int) -> tuple[int, int, int] | None:
        entry = self.producers.last_entry(producer_id)
        return None if entry is None else (entry.epoch, entry.last_seq, entry.last_offset)

    # --- truncation and deletion ---------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Kafka's `UnifiedLog.truncateTo`: drop every batch from the one holding offset."""
        if offset >= self.log_end_offset:
            # as Kafka's, the epoch cache is cut even so: a broker that became leader (an epoch
            # starting at its log end) and appended nothing before losing the leadership keeps
            # that epoch as its latest; a follower fetching with it is told to diverge again and
            # again and never fetches (it stayed in the ISR, and a later election lost the tail)
            self.epochs.truncate_from_end(self.log_end_offset)
            self.epochs.flush()
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
        self.log_start_offset = self.log_end_offset = self.recovery_point = self._high_watermark = offset
        self.epochs.clear()
        self.epochs.flush()
        self.producers.clear()
        self._snapshots = []

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
        delete_below_log_start(self)
