"""Where a segment's bytes live: a file under log.dirs (`FileStore`) or memory (`MemoryStore`)."""

from __future__ import annotations

import os
from collections import OrderedDict


def fsync_and_close(fds: list[int]) -> None:
    """fsync then close duplicated descriptors (from `FileStore.dup_if_dirty`)."""
    for fd in fds:
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class MemoryStore:
    """Bytes in a bytearray: the in-memory mode's segments (same behaviour, no durability)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    @property
    def size(self) -> int:
        return len(self._buf)

    def append(self, data) -> None:
        self._buf += data

    def read(self, position: int, n: int) -> bytes:
        with memoryview(self._buf) as view, view[position : position + n] as part:
            return bytes(part)  # one copy (a bytearray slice would make two)

    def truncate(self, size: int) -> None:
        del self._buf[size:]

    def flush(self) -> None:
        pass

    def dup_if_dirty(self) -> int | None:
        return None

    def close(self) -> None:
        pass

    def delete(self) -> None:
        self._buf = bytearray()

    def rename(self, path: str) -> None:
        pass

    def mtime_ms(self) -> int | None:
        return None


class FileStore:
    """A `.log` file, appended with os.write and read with os.pread (no buffering to lose).

    File descriptors are opened on demand and at most `MAX_OPEN` stay open across all stores
    (least recently used closed first): a broker holding thousands of partition replicas must
    not run out of descriptors under the usual 1024 soft limit.
    """

    MAX_OPEN = 256
    _open: OrderedDict[FileStore, None] = OrderedDict()

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = -1
        self._dirty = False
        fd = self._descriptor()
        self._size = os.fstat(fd).st_size

    def _descriptor(self) -> int:
        if self._fd >= 0:
            FileStore._open.move_to_end(self)
            return self._fd
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        FileStore._open[self] = None
        while len(FileStore._open) > FileStore.MAX_OPEN:
            FileStore._open.popitem(last=False)[0]._release()
        return self._fd

    def _release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @property
    def size(self) -> int:
        return self._size

    def append(self, data) -> None:
        fd = self._descriptor()
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
            self._size += written
        self._dirty = True

    def read(self, position: int, n: int) -> bytes:
        return os.pread(self._descriptor(), n, position) if n > 0 else b""

    def truncate(self, size: int) -> None:
        os.ftruncate(self._descriptor(), size)
        self._size = size
        self._dirty = True

    def flush(self) -> None:
        """fsync what was written since the last flush (through any descriptor: the page cache
        is the file's, so an evicted descriptor loses nothing)."""
        if self._dirty:
            os.fsync(self._descriptor())
            self._dirty = False

    def dup_if_dirty(self) -> int | None:
        """A descriptor of its own (safe from eviction) to fsync what was written, or None."""
        if not self._dirty:
            return None
        self._dirty = False
        return os.dup(self._descriptor())

    def close(self) -> None:
        FileStore._open.pop(self, None)
        self._release()

    def delete(self) -> None:
        self.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def rename(self, path: str) -> None:
        os.replace(self.path, path)
        self.path = path

    def mtime_ms(self) -> int | None:
        return int(os.fstat(self._descriptor()).st_mtime * 1000)
