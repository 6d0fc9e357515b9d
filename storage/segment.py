"""A log segment: `<20-digit base offset>.log` holding v2 batches exactly as on the wire.

The offset and time indexes are kept in memory, sparse like Kafka's (`index.interval.bytes`),
and rebuilt from the batch headers whenever the segment is opened (Kafka rebuilds missing or
corrupt `.index`/`.timeindex` files the same way, by scanning the batches).
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right

from . import batch as B
from .store import FileStore, MemoryStore

_SCAN_CHUNK = 4 * 1024 * 1024


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
        self._since_index = 0

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

    @property
    def rolling_timestamp(self) -> int:
        """Kafka's `LogSegment.rollingBasedTimestamp`: first batch's max timestamp, else creation."""
        return self.first_batch_timestamp if self.first_batch_timestamp >= 0 else self.created_ms

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
            self._since_index = 0
        self._since_index += h.size
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
        self._since_index = 0
        self.next_offset = self.base_offset
        self.first_batch_timestamp = self.max_timestamp = self.max_timestamp_batch_offset = -1

    def recover(self, check_crc: bool) -> int:
        """Rebuild the index by scanning every batch; truncate at the first torn or invalid one
        (Kafka's `LogSegment.recover`). Returns the bytes truncated."""
        self._reset_index()
        pos, size = 0, self.store.size
        last = self.base_offset - 1
        while pos < size:
            chunk = self.store.read(pos, min(_SCAN_CHUNK, size - pos))
            cpos, advanced = 0, False
            while len(chunk) - cpos >= B.HEADER_SIZE:
                h = B.BatchHeader(chunk, cpos)
                if h.length < B.MIN_BATCH_LENGTH or h.magic != 2 or h.base_offset <= last or h.last_offset_delta < 0:
                    return self._cut(pos + cpos)
                if pos + cpos + h.size > size:
                    return self._cut(pos + cpos)
                if cpos + h.size > len(chunk):
                    if cpos == 0:  # one batch bigger than the chunk
                        chunk = self.store.read(pos, h.size)
                        h = B.BatchHeader(chunk, 0)
                    else:
                        break
                if check_crc and not h.crc_ok(chunk):
                    return self._cut(pos + cpos)
                self._track(h, pos + cpos)
                last = h.last_offset
                cpos += h.size
                advanced = True
            if not advanced:
                return self._cut(pos + cpos)
            pos += cpos
        return 0

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
        start = self._idx_positions[self._floor_entry(offset)]
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
        end = 0
        while len(data) - end >= B.HEADER_SIZE:
            h = B.BatchHeader(data, end)
            if end + h.size > len(data) or h.last_offset >= max_offset:
                break
            end += h.size
        return data if end == len(data) else data[:end]

    def find_timestamp(self, timestamp: int) -> B.BatchHeader | None:
        """First batch whose max timestamp >= timestamp."""
        if self.max_timestamp < timestamp:
            return None
        i = max(bisect_left(self._idx_ts_before, timestamp) - 1, 0)
        for h in self.headers_from(self._idx_positions[i]):
            if h.max_timestamp >= timestamp:
                return h
        return None

    def read_batch(self, h: B.BatchHeader) -> bytes:
        return self.store.read(h.position, h.size)

    # --- truncation ----------------------------------------------------------------------

    def truncate_to(self, offset: int) -> int:
        """Drop the batch holding `offset` and everything after (Kafka truncates whole
        batches). Returns the bytes removed."""
        h = self.find(offset)
        if h is None:
            return 0
        removed = self.store.size - h.position
        self.store.truncate(h.position)
        self.recover(check_crc=False)
        return removed

    def flush(self) -> None:
        self.store.flush()

    def close(self) -> None:
        self.store.close()

    def delete(self) -> None:
        self.store.delete()
