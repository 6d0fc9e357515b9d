"""The leader epoch cache (Kafka's `LeaderEpochFileCache`), checkpointed to
`<partition dir>/leader-epoch-checkpoint` as `epoch start_offset` lines."""

from __future__ import annotations

import os
from bisect import bisect_left, bisect_right

from . import checkpoint

FILE = "leader-epoch-checkpoint"
UNDEFINED = (-1, -1)


class EpochCache:
    def __init__(self, directory: str | None):
        self._path = None if directory is None else os.path.join(directory, FILE)
        self.epochs: list[int] = []
        self.starts: list[int] = []
        self.dirty = False
        if self._path:
            try:
                entries = checkpoint.read_lines(self._path, 2)
            except ValueError:  # unreadable: rebuilt from the batches' leader epochs on load
                entries = []
            for epoch, start in entries:
                self.epochs.append(int(epoch))
                self.starts.append(int(start))

    def relocate(self, directory: str) -> None:
        """Its partition directory moved (the file moved with it)."""
        self._path = os.path.join(directory, FILE)

    def entries(self) -> list[tuple[int, int]]:
        return list(zip(self.epochs, self.starts))

    def latest_epoch(self) -> int | None:
        return self.epochs[-1] if self.epochs else None

    def assign(self, epoch: int, start_offset: int) -> None:
        """Kafka's `assign`: a new epoch (or an earlier start for the latest) replaces every
        entry with an epoch >= it or a start offset >= its start."""
        if epoch < 0:
            return
        if self.epochs and epoch == self.epochs[-1] and start_offset >= self.starts[-1]:
            return
        keep = [
            (e, s) for e, s in zip(self.epochs, self.starts) if e < epoch and s < start_offset
        ]
        keep.append((epoch, start_offset))
        self.epochs = [e for e, _ in keep]
        self.starts = [s for _, s in keep]
        self.dirty = True

    def end_offset_for(self, requested: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's `endOffsetFor`: (largest epoch <= requested, start offset of the next
        epoch or the log end offset); (-1, -1) for an epoch above every known one."""
        if requested < 0 or not self.epochs:
            return UNDEFINED
        if requested == self.epochs[-1]:
            return requested, log_end_offset
        higher = bisect_right(self.epochs, requested)
        if higher >= len(self.epochs):
            return UNDEFINED
        floor = higher - 1
        if floor < 0 or self.epochs[floor] > requested:
            return requested, self.starts[higher]
        return self.epochs[floor], self.starts[higher]

    def epoch_for_offset(self, offset: int) -> int:
        i = bisect_right(self.starts, offset) - 1
        return self.epochs[i] if i >= 0 else -1

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop entries starting at or after end_offset (log truncated to end_offset)."""
        i = bisect_left(self.starts, end_offset)
        if i < len(self.starts):
            del self.epochs[i:], self.starts[i:]
            self.dirty = True

    def truncate_from_start(self, start_offset: int) -> None:
        """Drop entries wholly before start_offset; the one spanning it now starts there."""
        i = bisect_right(self.starts, start_offset) - 1
        if i < 0:
            return
        if i > 0 or self.starts[0] != start_offset:
            del self.epochs[:i], self.starts[:i]
            self.starts[0] = start_offset
            self.dirty = True

    def clear(self) -> None:
        self.epochs, self.starts = [], []
        self.dirty = True

    def flush(self, sync: bool = True) -> str | None:
        """Write the checkpoint if it changed (fsynced unless `sync` is False); the path written."""
        written = None
        if self._path and self.dirty:
            checkpoint.write_lines(self._path, [f"{e} {s}" for e, s in self.entries()], sync=sync)
            written = self._path
        self.dirty = False
        return written

    def delete(self) -> None:
        if self._path:
            try:
                os.unlink(self._path)
            except FileNotFoundError:
                pass
