"""A partition log's files as a whole (Kafka's `LocalLog` side of `UnifiedLog`): what was
written made durable (the recovery point), the segments closed, the partition directory moved to
another log dir (AlterReplicaLogDirs) or deleted. A mixin of log.py's PartitionLog.
"""

from __future__ import annotations

import os
import shutil

from .epoch_cache import EpochCache
from .segment import Segment
from .store import fsync_and_close


class LogFiles:
    # the PartitionLog's state these work on
    directory: str | None
    segments: list[Segment]
    _bases: list[int]
    epochs: EpochCache
    log_end_offset: int
    recovery_point: int
    closed: bool

    # --- durability ----------------------------------------------------------------------

    def begin_flush(self) -> tuple[list[int], int]:
        """(duplicated descriptors of the segments written since the last flush, the log end
        offset they cover): fsync and close them anywhere, even in another thread, then
        `end_flush(offset)` here. Kafka flushes so, off the request path."""
        fds = [fd for seg in self.segments if (fd := seg.store.dup_if_dirty()) is not None]
        return fds, self.log_end_offset

    def end_flush(self, recovery_point: int) -> None:
        self.recovery_point = min(max(self.recovery_point, recovery_point), self.log_end_offset)

    def flush(self) -> None:
        """fsync what was written and move the recovery point to the log end offset."""
        fds, offset = self.begin_flush()
        fsync_and_close(fds)
        self.end_flush(offset)
        self.epochs.flush()

    def close(self) -> None:
        if self.closed:
            return
        self.flush()
        for seg in self.segments:
            seg.close()
        self.closed = True

    def relocate(self, directory: str) -> None:
        """Move the partition directory to `directory` (AlterReplicaLogDirs), the log staying open:
        what was written is fsynced first, the segment files reopen from the new place on their
        next use. A rename within a file system; across file systems a copy, then the old removed."""
        self.flush()
        for seg in self.segments:
            seg.store.close()
        shutil.move(self.directory, directory)
        self.directory = directory
        for seg in self.segments:
            seg.store.path = os.path.join(directory, os.path.basename(seg.store.path))
        self.epochs.relocate(directory)

    def delete(self) -> None:
        for seg in self.segments:
            seg.delete()
        self.segments, self._bases = [], []
        self.closed = True
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
