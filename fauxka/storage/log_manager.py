"""The logs of the partition replicas a broker holds (Kafka's `LogManager`): one directory per
partition under one of `log.dirs`, recovery on load, and the per-log-dir checkpoint files
`recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`,
`replication-offset-checkpoint` (high watermarks) and `meta.properties`.

`in_memory=True` keeps the same API with no files at all (tests that want speed).
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from collections.abc import Mapping

import structlog

from . import checkpoint
from .cleaner import clean_steps
from .config import LogConfig
from .errors import ErrorCode, StorageError
from .log import PartitionLog, _now_ms
from .retention import retention_pass
from .store import fsync_and_close

RECOVERY_POINTS = "recovery-point-offset-checkpoint"
LOG_START_OFFSETS = "log-start-offset-checkpoint"
HIGH_WATERMARKS = "replication-offset-checkpoint"
META = "meta.properties"
_log = structlog.get_logger("storage")
_DIR = re.compile(r"^(.+)-(\d+)$")


class LogManager:
    def __init__(
        self, log_dirs: list[str], *, in_memory: bool = False,
        producer_id_expiration_ms: int = 86400000,
    ):
        self.log_dirs = [os.path.abspath(d) for d in log_dirs] if not in_memory else list(log_dirs)
        self.in_memory = in_memory
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self.logs: dict[tuple[str, int], PartitionLog] = {}
        self._dir_of: dict[tuple[str, int], str] = {}
        self._held: dict[str, int] = {}  # partitions per log dir, kept with _dir_of (new logs go to the emptiest)
        self._preferred: dict[tuple[str, int], str] = {}  # AlterReplicaLogDirs before the replica exists
        self._memory_hws: dict[tuple[str, int], int] = {}
        self._unsynced: list[str] = []  # partition.metadata files written but not fsynced yet
        if not in_memory:
            if not self.log_dirs:
                raise ValueError("LogManager needs at least one log dir")
            for d in self.log_dirs:
                os.makedirs(d, exist_ok=True)

    # --- loading -------------------------------------------------------------------------

    def load(self) -> None:
        """Open every `<topic>-<partition>` directory of every log dir, recovering each log
        from its recovery point (a torn or corrupt tail is truncated). Logs open with Kafka's
        default config and no retention or cleaning until `get_or_create` gives each its
        topic's config (a topic with infinite retention must not lose data meanwhile)."""
        if self.in_memory:
            return
        for d in self.log_dirs:
            recovery = _read_or_empty(os.path.join(d, RECOVERY_POINTS))
            starts = _read_or_empty(os.path.join(d, LOG_START_OFFSETS))
            hws = _read_or_empty(os.path.join(d, HIGH_WATERMARKS))
            for name in sorted(os.listdir(d)):
                path = os.path.join(d, name)
                if not os.path.isdir(path):
                    continue
                if name.endswith("-delete"):  # Kafka renames a deleted log `<tp>.<uuid>-delete`
                    shutil.rmtree(path, ignore_errors=True)
                    continue
                m = _DIR.match(name)
                if not m:
                    continue
                tp = (m.group(1), int(m.group(2)))
                log = PartitionLog.load(
                    tp[0], tp[1], LogConfig(), path,
                    log_start_offset=starts.get(tp, 0), recovery_point=recovery.get(tp, 0),
                )
                log.high_watermark = hws.get(tp, 0)
                log.configured = False  # no retention or cleaning until its topic config comes
                self.logs[tp] = log
                self._place(tp, d)

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self.logs.get((topic, partition))

    def get_or_create(
        self, topic: str, partition: int, config: LogConfig, topic_id: uuid.UUID | None = None
    ) -> PartitionLog:
        """The partition's log with `config` applied, created empty (in the log dir holding
        the fewest partitions, as Kafka's `nextLogDirs`) when there is none. With `topic_id`,
        a log left by an earlier topic of the same name (its `partition.metadata` names
        another id, KIP-516) is deleted and replaced by an empty one."""
        tp = (topic, partition)
        log = self.logs.get(tp)
        if log is not None and topic_id is not None and log.topic_id not in (None, topic_id):
            self.delete(topic, partition)
            log = None
        if log is not None:
            log.config = config
            log.configured = True
        elif self.in_memory:
            log = self.logs[tp] = PartitionLog.load(topic, partition, config, None)
        else:
            d = self._preferred.pop(tp, None) or min(self.log_dirs, key=lambda x: self._held.get(x, 0))
            path = os.path.join(d, f"{topic}-{partition}")
            log = self.logs[tp] = PartitionLog.load(topic, partition, config, path)
            self._place(tp, d)
        log.defer_sync = self._unsynced.append
        if topic_id is not None and log.topic_id is None:
            log.topic_id = topic_id
        return log

    @property
    def unsynced(self) -> bool:
        return bool(self._unsynced)

    def take_unsynced(self) -> list[str]:
        """The files the logs wrote since the last call and left unsynced (partition.metadata, a
        new epoch's leader-epoch-checkpoint), for `checkpoint.fsync_files` off the caller's thread:
        thousands of fsyncs hold nothing up, as Kafka's scheduled flush of partition.metadata."""
        paths, self._unsynced = self._unsynced, []
        return paths

    def delete(self, topic: str, partition: int) -> None:
        tp = (topic, partition)
        log = self.logs.pop(tp, None)
        self._place(tp, None)
        self._memory_hws.pop(tp, None)
        if log is not None:
            log.delete()

    def _place(self, tp: tuple[str, int], log_dir: str | None) -> None:
        """Record (None: forget) which log dir holds `tp`, keeping the per-dir counts."""
        old = self._dir_of.pop(tp, None)
        if old is not None:
            self._held[old] -= 1
        if log_dir is not None:
            self._dir_of[tp] = log_dir
            self._held[log_dir] = self._held.get(log_dir, 0) + 1

    def has_log_dir(self, path: str) -> bool:
        """Whether `path` is one of log.dirs, as Kafka compares them (its absolute form, unnormalised)."""
        return not self.in_memory and path in self.log_dirs

    def move(self, topic: str, partition: int, log_dir: str) -> bool:
        """AlterReplicaLogDirs: the partition's log into `log_dir` (one of log.dirs), or, when this
        broker holds no log of it yet, that log created there later. True when a log moved. The
        checkpoint files of every log dir are written again at once, so a crash right after finds
        the recovery point, log start offset and high watermark in the new place. StorageError
        when the files cannot be moved (the log stays where it was)."""
        tp = (topic, partition)
        log = self.logs.get(tp)
        if log is None:
            self._preferred[tp] = log_dir
            return False
        self._preferred.pop(tp, None)
        if self.in_memory or self._dir_of.get(tp) == log_dir:
            return False
        target = os.path.join(log_dir, f"{topic}-{partition}")
        if os.path.exists(target):
            raise StorageError(ErrorCode.kafka_storage_error, f"{target} exists already")
        try:
            log.relocate(target)
        except OSError as exc:
            raise StorageError(ErrorCode.kafka_storage_error, f"moving {log.directory} to {target} failed: {exc}") from exc
        self._place(tp, log_dir)
        self.checkpoint()
        return True

    def partitions(self) -> list[tuple[str, int]]:
        return sorted(self.logs)

    def log_dir_of(self, topic: str, partition: int) -> str | None:
        """The log dir holding the partition (DescribeLogDirs); None in memory or unknown."""
        return self._dir_of.get((topic, partition))

    # --- checkpoints ---------------------------------------------------------------------

    def write_high_watermarks(self, hws: Mapping[tuple[str, int], int]) -> None:
        """Kafka's `replication-offset-checkpoint`, one per log dir, for every partition it
        holds: the value given, else the log's own high watermark."""
        merged = {tp: hws.get(tp, log.high_watermark) for tp, log in self.logs.items()}
        if self.in_memory:
            self._memory_hws = merged
            return
        for d in self.log_dirs:
            mine = {tp: hw for tp, hw in merged.items() if self._dir_of.get(tp) == d}
            checkpoint.write_offsets(os.path.join(d, HIGH_WATERMARKS), mine)

    def read_high_watermarks(self) -> dict[tuple[str, int], int]:
        if self.in_memory:
            return dict(self._memory_hws)
        out: dict[tuple[str, int], int] = {}
        for d in self.log_dirs:
            out.update(_read_or_empty(os.path.join(d, HIGH_WATERMARKS)))
        return out

    def checkpoint(self) -> None:
        """Flush every log (moving its recovery point) and write recovery points, log start
        offsets and high watermarks (Kafka's periodic checkpoint tasks), all in this thread."""
        job = self.begin_checkpoint()
        job.run()
        job.finish()

    def begin_checkpoint(self) -> CheckpointJob:
        """The same in three steps, so that the slow part can leave the caller's thread:
        begin here, `job.run()` anywhere (fsyncs and file writes, touching no shared state),
        then `job.finish()` here again (recovery points move)."""
        flushes = [(log, *log.begin_flush()) for log in self.logs.values()]
        files: list[tuple[str, dict]] = []
        targets = {tp: log.log_end_offset for tp, log in self.logs.items()}
        hws = {tp: log.high_watermark for tp, log in self.logs.items()}
        if self.in_memory:
            self._memory_hws = hws
        else:
            for d in self.log_dirs:
                mine = [tp for tp in self.logs if self._dir_of.get(tp) == d]
                files += [
                    (os.path.join(d, RECOVERY_POINTS), {tp: targets[tp] for tp in mine}),
                    (os.path.join(d, LOG_START_OFFSETS), {tp: self.logs[tp].log_start_offset for tp in mine}),
                    (os.path.join(d, HIGH_WATERMARKS), {tp: hws[tp] for tp in mine}),
                ]
        return CheckpointJob(flushes, files)

    # --- background work (the caller schedules it) ---------------------------------------

    def retention_pass(self, now_ms: int | None = None) -> int:
        """Delete segments by retention.ms / retention.bytes / log start offset (returns how
        many) and forget producers idle past producer.id.expiration.ms."""
        now = _now_ms() if now_ms is None else now_ms
        for log in self.logs.values():
            log.producers.expire(now, self.producer_id_expiration_ms)
        return sum(retention_pass(log, now) for log in list(self.logs.values()) if log.configured)

    def cleaner_pass(self, now_ms: int | None = None) -> int:
        """Compact every cleanup.policy=compact log once; returns the records removed."""
        steps = self.cleaner_steps(now_ms)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value

    def cleaner_steps(self, now_ms: int | None = None):
        """`cleaner_pass` in steps (a generator returning the records removed): it yields between
        segments and between logs, for a caller on an event loop to serve requests meanwhile; a log
        closed or deleted meanwhile is left alone."""
        now = _now_ms() if now_ms is None else now_ms
        removed = 0
        for tp, log in list(self.logs.items()):
            if not log.configured or self.logs.get(tp) is not log:
                continue
            steps = clean_steps(log, now)
            try:
                while True:
                    next(steps)
                    yield
                    if self.logs.get(tp) is not log:
                        steps.close()
                        break
            except StopIteration as done:
                removed += done.value
            except StorageError as exc:  # a batch that no longer decodes: leave the log as is
                _log.error("log cleaner skipped a partition", partition=log.tp, error=str(exc))
        return removed

    # --- meta.properties -----------------------------------------------------------------

    def write_meta_properties(self, broker_id: int, cluster_id: str) -> None:
        """Kafka's ZK-mode `meta.properties` (version 0) in every log dir."""
        if self.in_memory:
            return
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime())
        body = f"#\n#{stamp}\ncluster.id={cluster_id}\nversion=0\nbroker.id={broker_id}\n"
        for d in self.log_dirs:
            path = os.path.join(d, META)
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())
            os.replace(path + ".tmp", path)

    def read_meta_properties(self) -> dict[str, str] | None:
        """The first log dir's meta.properties as a dict, None if absent (or in memory)."""
        if self.in_memory:
            return None
        for d in self.log_dirs:
            try:
                with open(os.path.join(d, META), encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except FileNotFoundError:
                continue
            return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
        return None

    def close(self) -> None:
        self.checkpoint()
        for log in self.logs.values():
            log.close()


class CheckpointJob:
    """One checkpoint: fsync the logs' new bytes, then write the checkpoint files."""

    def __init__(self, flushes: list, files: list[tuple[str, dict]]):
        self._flushes = flushes  # (log, duplicated descriptors, recovery point after them)
        self._files = files
        self._done = False

    def run(self) -> None:
        for _, fds, _ in self._flushes:
            fsync_and_close(fds)
        for path, offsets in self._files:
            checkpoint.write_offsets(path, offsets)
        self._done = True

    def finish(self) -> None:
        if not self._done:
            return
        for log, _, offset in self._flushes:
            if not log.closed:
                log.end_flush(offset)


def _read_or_empty(path: str) -> dict[tuple[str, int], int]:
    """A checkpoint file's offsets; an unreadable file counts as absent (Kafka would then
    recover every log from scratch, which is what an empty recovery point does)."""
    try:
        return checkpoint.read_offsets(path)
    except (ValueError, OSError):
        return {}


def stored_broker_id(log_dirs: list[str]) -> int | None:
    """The broker.id of the first log dir's meta.properties (Kafka's MetaPropertiesEnsemble.nodeId),
    None where there is none."""
    for d in log_dirs:
        try:
            with open(os.path.join(d, META), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (FileNotFoundError, NotADirectoryError):
            continue
        props = dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
        if "broker.id" in props:
            return int(props["broker.id"])
    return None
