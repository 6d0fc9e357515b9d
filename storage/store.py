"""Where a segment's bytes live: a file under log.dirs (`FileStore`) or memory (`MemoryStore`)."""

from __future__ import annotations

import os


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
        return bytes(self._buf[position : position + n])

    def truncate(self, size: int) -> None:
        del self._buf[size:]

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def delete(self) -> None:
        self._buf = bytearray()

    def rename(self, path: str) -> None:
        pass

    def mtime_ms(self) -> int | None:
        return None


class FileStore:
    """A `.log` file, appended with os.write and read with os.pread (no buffering to lose)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = os.fstat(self._fd).st_size

    @property
    def size(self) -> int:
        return self._size

    def append(self, data) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
            self._size += written

    def read(self, position: int, n: int) -> bytes:
        return os.pread(self._fd, n, position) if n > 0 else b""

    def truncate(self, size: int) -> None:
        os.ftruncate(self._fd, size)
        self._size = size

    def flush(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

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
        return int(os.fstat(self._fd).st_mtime * 1000)
