"""A log segment: `<20-digit base offset>.log` holding v2 batches exactly as on the wire.

The offset and time indexes are kept in memory, sparse like Kafka's (`index.interval.bytes`),
and rebuilt from the batch headers whenever the segment is opened (Kafka rebuilds missing or
corrupt `.index`/`.timeindex` files the same way, by scanning the batches).
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right

import structlog

from . import batch as B
from . import records as R
from .store import FileStore, MemoryStore

_SCAN_CHUNK = 4 * 1024 * 1024
_log = structlog.get_logger("storage")


def file_name(base_offset: int) -> str:
    return f"{base_offset:020d}.log"


class Segment:
    def __init__(self, base_offset: int, store, index_interval_bytes: int = 4096, created_ms: int = 0):
        self.base_offset = base_offset
        self.store = store
        self.index_interval_bytes = index_interval_bytes
        self.next_offset = base_offset
        self.created_ms = created_ms
        self.first_batch_timestamp = -1
        self.max_timestamp = -1
        self.max_timestamp_batch_offset = -1  # base offset of the batch holding max_timestamp
        self._idx_offsets = array("q")  # base offset of an indexed batch
        self._idx_positions = array("q")
        self._idx_ts_before = array("q")  # max timestamp of every batch before that one
        self._idx_ts_offset_before = array("q")  # the base offset of the batch holding it
        self._since_index = 0
        self._last = (-1, -1)  # (base offset, position) of the last batch: where a tail read starts

    @classmethod
    def create(cls, directory: str | None, base_offset: int, index_interval_bytes: int, now_ms: int) -> Segment:
        store = MemoryStore() if directory is None else FileStore(os.path.join(directory, file_name(base_offset)))
        if store.size:
            store.truncate(0)
        return cls(base_offset, store, index_interval_bytes, now_ms)

    @property
    def size(self) -> int:
        return self.store.size

    @property
    def empty(self) -> bool:
        return self.store.size == 0

    # --- writing -------------------------------------------------------------------------

    def append(self, data, headers: list[B.BatchHeader]) -> None:
        """Write whole batches; `headers` positions are relative to `data`."""
        start = self.store.size
        self.store.append(data)
        for h in headers:
            self._track(h, start + h.position)

    def _track(self, h: B.BatchHeader, position: int) -> None:
        if not self._idx_offsets or self._since_index >= self.index_interval_bytes:
            self._idx_offsets.append(h.base_offset)
            self._idx_positions.append(position)
            self._idx_ts_before.append(self.max_timestamp)
            self._idx_ts_offset_before.append(self.max_timestamp_batch_offset)
            self._since_index = 0
        self._since_index += h.size
        self._last = (h.base_offset, position)
        if self.first_batch_timestamp < 0:
            self.first_batch_timestamp = h.max_timestamp
        if h.max_timestamp > self.max_timestamp:
            self.max_timestamp = h.max_timestamp
            self.max_timestamp_batch_offset = h.base_offset
        self.next_offset = h.next_offset

    def _reset_index(self) -> None:
        self._idx_offsets = array("q")
        self._idx_positions = array("q")
        self._idx_ts_before = array("q")
        self._idx_ts_offset_before = array("q")
        self._since_index = 0
        self._last = (-1, -1)
        self.next_offset = self.base_offset
        self.first_batch_timestamp = self.max_timestamp = self.max_timestamp_batch_offset = -1

    def recover(self, check_crc: bool, visit=None) -> int:
        """Rebuild the index by scanning every batch; truncate at the first torn or invalid one
        (Kafka's `LogSegment.recover`). `visit(buf, header)` sees each valid batch (producer
        state is rebuilt so). Returns the bytes truncated."""
        self._reset_index()
        last = [self.base_offset - 1]

        def accept(buf, h: B.BatchHeader, position: int) -> bool:
            if (
                h.magic != 2
                or h.base_offset <= last[0]
                or h.last_offset_delta < 0
                or h.last_offset - self.base_offset > B.INT32_MAX  # Kafka's relative offsets
            ):
                return False
            if check_crc and not h.crc_ok(buf):
                return False
            self._track(h, position)
            last[0] = h.last_offset
            if visit is not None:
                visit(buf, h)
            return True

        end = self.scan(accept)
        return self._cut(end) if end < self.store.size else 0

    def scan(self, accept, start: int = 0) -> int:
        """Read the batches from `start` in large chunks, calling accept(buf, header,
        position) for each whole one until it returns False; returns where scanning stopped."""
        pos, size = start, self.store.size
        while pos < size:
            chunk = self.store.read(pos, min(_SCAN_CHUNK, size - pos))
            cpos = 0
            while len(chunk) - cpos >= B.HEADER_SIZE:
                h = B.BatchHeader(chunk, cpos)
                if h.length < B.MIN_BATCH_LENGTH or pos + cpos + h.size > size:
                    return pos + cpos
                if cpos + h.size > len(chunk):
                    if cpos:
                        break
                    chunk = self.store.read(pos, h.size)  # one batch bigger than the chunk
                    h = B.BatchHeader(chunk, 0)
                if not accept(chunk, h, pos + cpos):
                    return pos + cpos
                cpos += h.size
            if not cpos:
                return pos
            pos += cpos
        return pos

    def _cut(self, position: int) -> int:
        cut = self.store.size - position
        self.store.truncate(position)
        return cut

    # --- reading -------------------------------------------------------------------------

    def _floor_entry(self, offset: int) -> int:
        i = bisect_right(self._idx_offsets, offset) - 1
        return max(i, 0)

    def headers_from(self, position: int, end: int | None = None):
        """Headers of the batches from `position` (a batch boundary) to `end`."""
        end = self.store.size if end is None else end
        pos = position
        while end - pos >= B.HEADER_SIZE:
            h = B.BatchHeader(self.store.read(pos, B.HEADER_SIZE), 0)
            h.position = pos
            yield h
            pos += h.size

    def find(self, offset: int) -> B.BatchHeader | None:
        """Header of the first batch whose last offset >= offset (the batch holding it)."""
        if not self._idx_offsets or offset >= self.next_offset:
            return None
        last_base, last_position = self._last
        # a follower's or a tailing consumer's fetch asks for the newest batch: one header read
        # instead of a walk from the index entry before it (up to index.interval.bytes of headers)
        start = last_position if 0 <= last_base <= offset else self._idx_positions[self._floor_entry(offset)]
        for h in self.headers_from(start):
            if h.last_offset >= offset:
                return h
        return None

    def read(self, start_offset: int, max_bytes: int, max_offset: int, min_one_batch: bool) -> bytes:
        """Whole batches from the one holding start_offset, each ending before max_offset."""
        first = self.find(start_offset)
        if first is None or first.last_offset >= max_offset:
            return b""
        pos = first.position
        window = min(max(max_bytes, 0), self.store.size - pos)
        data = self.store.read(pos, window) if window >= first.size else b""
        if not data:
            return self.store.read(pos, first.size) if min_one_batch else b""
        if pos + len(data) == self.store.size and self.next_offset <= max_offset:
            return data  # the rest of the segment, all below max_offset: whole batches
        end, n = 0, len(data)
        unpack_len, unpack_delta = B.LENGTH.unpack_from, B.DELTA.unpack_from
        while n - end >= B.HEADER_SIZE:
            base, length = unpack_len(data, end)
            size = length + B.LOG_OVERHEAD
            if end + size > n or base + unpack_delta(data, end + 23)[0] >= max_offset:
                break
            end += size
        return data if end == n else data[:end]

    def find_timestamp(self, timestamp: int) -> B.BatchHeader | None:
        """First batch whose max timestamp >= timestamp."""
        if self.max_timestamp < timestamp:
            return None
        i = max(bisect_left(self._idx_ts_before, timestamp) - 1, 0)
        for h in self.headers_from(self._idx_positions[i]):
            if h.max_timestamp >= timestamp:
                return h
        return None

    def offset_for_timestamp(self, timestamp: int, min_offset: int) -> tuple[int, int, int] | None:
        """(offset, timestamp, leader epoch) of the first record at or after min_offset whose
        timestamp >= timestamp (Kafka's `LogSegment.findOffsetByTimestamp`; decodes one batch)."""
        h = self.find_timestamp(timestamp)
        while h is not None:
            raw = self.read_batch(h)
            for r in R.decode(raw, B.BatchHeader(raw, 0)):
                offset = h.base_offset + r.offset_delta
                if r.timestamp >= timestamp and offset >= min_offset:
                    return offset, r.timestamp, h.leader_epoch
            after = self.headers_from(h.position + h.size)
            h = next((x for x in after if x.max_timestamp >= timestamp), None)
        return None

    def max_timestamp_record(self) -> tuple[int, int, int] | None:
        """(offset, timestamp, leader epoch) of the record holding the segment's max timestamp
        (KIP-734, as Kafka 3.9 finds it: the batch, then the record inside)."""
        h = self.find(self.max_timestamp_batch_offset)
        if h is None:
            return None
        raw = self.read_batch(h)
        recs = R.decode(raw, B.BatchHeader(raw, 0))
        if not recs:
            return None
        best = max(recs, key=lambda r: r.timestamp)  # max() keeps the first of equals
        return h.base_offset + best.offset_delta, best.timestamp, h.leader_epoch

    def read_batch(self, h: B.BatchHeader) -> bytes:
        return self.store.read(h.position, h.size)

    # --- truncation ----------------------------------------------------------------------

    def truncate_to(self, offset: int) -> int:
        """Drop the batch holding `offset` and everything after (Kafka truncates whole
        batches). The index is cut at the last entry before the cut and the few batches from
        there re-read. Returns the bytes removed."""
        h = self.find(offset)
        if h is None:
            return 0
        removed = self.store.size - h.position
        self.store.truncate(h.position)
        self._last = (-1, -1)  # set again by the batches rescanned below
        k = bisect_left(self._idx_positions, h.position) - 1  # entry to rescan from
        if k <= 0:
            self.recover(check_crc=False)
            return removed
        start = self._idx_positions[k]
        self.max_timestamp = self._idx_ts_before[k]
        self.max_timestamp_batch_offset = self._idx_ts_offset_before[k]
        for arr in (self._idx_offsets, self._idx_positions, self._idx_ts_before, self._idx_ts_offset_before):
            del arr[k:]
        self._since_index = self.index_interval_bytes  # the first batch rescanned is indexed

        def track(_buf, batch: B.BatchHeader, position: int) -> bool:
            self._track(batch, position)
            return True

        self.scan(track, start)
        return removed

    def flush(self) -> None:
        self.store.flush()

    def close(self) -> None:
        self.store.close()

    def delete(self) -> None:
        self.store.delete()


def open_segments(directory: str, index_interval_bytes: int, recovery_point: int, visit) -> list[Segment]:
    """The `.log` files of a partition directory, recovered in offset order (Kafka's
    `LogLoader`): CRC checked past the recovery point; at the first torn or invalid batch the
    segment is truncated and every later segment deleted. Leftovers of an interrupted cleaning
    or deletion go. `visit(buf, header)` sees every batch kept."""
    bases = []
    for name in os.listdir(directory):
        if name.endswith((".cleaned", ".swap", ".deleted", ".tmp")):
            os.unlink(os.path.join(directory, name))
        elif name.endswith(".log") and name[:-4].isdigit():
            bases.append(int(name[:-4]))
    bases.sort()
    segments = []
    for i, base in enumerate(bases):
        store = FileStore(os.path.join(directory, file_name(base)))
        seg = Segment(base, store, index_interval_bytes, store.mtime_ms() or 0)
        next_base = bases[i + 1] if i + 1 < len(bases) else None
        cut = seg.recover(check_crc=next_base is None or next_base > recovery_point, visit=visit)
        segments.append(seg)
        if cut:
            for later in bases[i + 1 :]:
                os.unlink(os.path.join(directory, file_name(later)))
            _log.warning(
                "log recovery truncated a torn or corrupt tail", directory=directory,
                segment=file_name(base), bytes_truncated=cut, next_offset=seg.next_offset,
                segments_deleted=len(bases) - i - 1,
            )
            break
    return segments
