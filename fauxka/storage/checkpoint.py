"""Kafka's checkpoint files: `CheckpointFile` text format, written atomically (tmp + rename).

    0                 <- version
    <count>
    <entry>           <- one per line, e.g. `topic partition offset` or `epoch start_offset`
"""

from __future__ import annotations

import base64
import os
import uuid


def write_lines(path: str, entries: list[str], version: int = 0, sync: bool = True) -> None:
    """Written whole, then renamed over `path`; fsynced first unless `sync` is False (the caller
    has it fsynced later: `fsync_files`)."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"{version}\n{len(entries)}\n")
        for e in entries:
            f.write(e + "\n")
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)


def read_lines(path: str, fields: int, version: int = 0) -> list[list[str]]:
    """Entries split into `fields` columns; a missing file is empty; a malformed one raises
    ValueError (Kafka fails the log dir; callers decide)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    if len(lines) < 2 or int(lines[0]) != version:
        raise ValueError(f"{path}: unrecognised checkpoint version or header")
    count = int(lines[1])
    entries = [line.split() for line in lines[2 : 2 + count]]
    if len(entries) != count or any(len(e) != fields for e in entries):
        raise ValueError(f"{path}: expected {count} entries of {fields} fields")
    return entries


def write_offsets(path: str, offsets: dict[tuple[str, int], int]) -> None:
    """replication-offset-checkpoint / recovery-point-offset-checkpoint / log-start-offset-checkpoint."""
    write_lines(path, [f"{t} {p} {o}" for (t, p), o in sorted(offsets.items())])


def read_offsets(path: str) -> dict[tuple[str, int], int]:
    return {(t, int(p)): int(o) for t, p, o in read_lines(path, 3)}


PARTITION_METADATA = "partition.metadata"


def write_partition_metadata(directory: str, topic_id: uuid.UUID, sync: bool = True) -> str:
    """`partition.metadata`: `version: 0` and the topic id as Kafka prints a Uuid (URL-safe
    base64, no padding); its path. `sync=False` leaves the fsync to the caller (`fsync_files`,
    off the event loop, as Kafka flushes it from its scheduler): a file torn by a crash before
    then reads as no topic id, which the controller's next word assigns again."""
    encoded = base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
    path = os.path.join(directory, PARTITION_METADATA)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(f"version: 0\ntopic_id: {encoded}\n")
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(path + ".tmp", path)
    return path


def fsync_files(paths: list[str]) -> None:
    """fsync each file; one gone meanwhile (its log deleted or moved) is skipped."""
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def read_partition_metadata(directory: str) -> uuid.UUID | None:
    try:
        with open(os.path.join(directory, PARTITION_METADATA), encoding="utf-8") as f:
            fields = dict(line.split(": ", 1) for line in f.read().splitlines() if ": " in line)
        return uuid.UUID(bytes=base64.urlsafe_b64decode(fields["topic_id"] + "=="))
    except (FileNotFoundError, KeyError, ValueError):
        return None
