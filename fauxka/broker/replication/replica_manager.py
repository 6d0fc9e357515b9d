"""The replicas this broker holds, and their roles, from the metadata cache.

Kafka's ReplicaManager in small: it owns the storage LogManager, makes a Partition for every
partition the controller assigned here, and turns the cache's ("partition", topic, p) events
into becomeLeader / becomeFollower (Kafka's LeaderAndIsr). Logs of deleted topics, and of
partitions moved away, are deleted. Appends (produce) and reads (fetch, list offsets) go through
it; every wait (acks=all, long-poll fetch) is in its purgatory keyed by (topic, partition),
woken by appends and high-watermark moves.
"""

import asyncio
import time
from typing import Any, Callable

from prometheus_client import CollectorRegistry

from fauxka.model.topic_configs import ConfigValidationError, effective_topic_configs
from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.storage.checkpoint import fsync_files
from fauxka.storage.config import LogConfig
from fauxka.storage.log_manager import LogManager

from ..config import BrokerConfig
from ..controller_channel import ControllerChannel
from ..inter_broker import InterBrokerConnector
from ..metadata_cache import MetadataCache
from .appends import Appender
from .fetch_sessions import FetchSessionCache
from .fetcher import FailedLogs, FetcherManager
from .hosted import HostedPartitions
from .isr import IsrManager
from .metrics import ReplicationMetrics
from .partition import Partition
from .creation_pacer import CHUNK, CreationPacer
from .reads import Reader
from .role_log import RoleLog


def now_ms() -> float:
    return time.time() * 1000


class ReplicaManager:
    def __init__(self, config: BrokerConfig, cache: MetadataCache, broker_layers: Callable[[], tuple[dict, dict, dict]],
                 connector: InterBrokerConnector | None, controller_channel: ControllerChannel | None,
                 registry: CollectorRegistry, log: Any, failed_logs: FailedLogs = lambda keys: ()):
        """`broker_layers`: this broker's config as topics inherit it (the admin plane's); `connector`:
        the followers' connections to their leaders; `controller_channel`: AlterPartition (ISR changes);
        `failed_logs(keys)`: those of the (topic, partition)s whose log here has failed (the fault
        kit's `storage` fault): its follower stops fetching them."""
        self.broker_id = config.broker_id
        self.config = config
        self.cache = cache
        self._broker_layers = broker_layers
        self.connector = connector
        self.controller_channel = controller_channel
        self.log = log.bind(component="replicas")
        self.roles = RoleLog(self.log)
        self.logs = LogManager(list(self.config["log.dirs"]), in_memory=self.config["fauxka.log.in.memory"])
        self.hosted = hosted = HostedPartitions(self.broker_id, cache)
        self.partitions = hosted.partitions
        self.purgatory = hosted.purgatory
        self.metrics = ReplicationMetrics(registry, self.partitions, failed_logs)
        hosted.replicated_in = self.metrics.replicated_in
        self.isr = IsrManager(hosted, controller_channel, cache, self.metrics, config["replica.lag.time.max.ms"],
                              self.spawn, self.log)
        self.appender = Appender(hosted, self.purgatory, self.metrics, config)
        self.reader = Reader(hosted, self.purgatory, self.metrics, self.isr, config)
        self.fetch_sessions = FetchSessionCache(self.config["max.incremental.fetch.session.cache.slots"])
        self.fetchers = FetcherManager(hosted, connector, config, self.spawn, self.log, failed_logs)
        self.pacer = CreationPacer(self.log)
        self._held: dict[str, set[int]] = {}  # partition indexes of self.partitions, by topic
        self._unsubscribe = None
        self._tasks: set[asyncio.Task] = set()
        self._saved_hws: dict[tuple[str, int], int] = {}
        self._syncing: asyncio.Task | None = None
        self._loaded = False

    # --- life cycle -------------------------------------------------------------------------------

    def load(self) -> None:
        """Recover the logs on disk (before any request is served)."""
        self.logs.load()
        self.logs.write_meta_properties(self.broker_id, self.cache.cluster_id or "")
        self._saved_hws = self.logs.read_high_watermarks()
        self._loaded = True

    def start(self) -> None:
        """Follow the metadata cache (already synced): a replica for every assigned partition."""
        self._unsubscribe = self.cache.subscribe(self._on_cache_event)
        with self.pacer.unpaced():
            for topic in list(self.cache.all_topics):
                self._apply_topic(topic)
        self.spawn(self.pacer.run(self._apply_topic_steps), "replica-creation")
        for topic, index in self.logs.partitions():  # logs of topics deleted while we were away
            if self.hosted.assigned(topic, index) is None:
                self._delete(topic, index)
        self.spawn(self._checkpoint_periodically(), "hw-checkpoint")
        self.spawn(self._every("log.retention.check.interval.ms", self.logs.retention_pass), "log-retention")
        self.spawn(self._cleaning(), "log-cleaner")
        self.isr.start()

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.purgatory.close()
        await self.fetchers.stop()
        await self.isr.stop()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if not self._loaded:
            return
        try:
            fsync_files(self.logs.take_unsynced())
            self.checkpoint()
        finally:
            self.logs.close()

    def spawn(self, coro, name: str) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def checkpoint(self) -> None:
        """Flush and write recovery points, log start offsets and high watermarks, here and now."""
        self.logs.checkpoint()

    async def _checkpoint_periodically(self) -> None:
        """Kafka's high-watermark checkpoint task; the fsyncs and file writes run in a worker
        thread while appends go on (storage's begin_checkpoint / run / finish)."""
        interval = self.config["replica.high.watermark.checkpoint.interval.ms"] / 1000
        while True:
            await asyncio.sleep(interval)
            job = self.logs.begin_checkpoint()
            try:
                await asyncio.to_thread(job.run)
            except OSError as exc:
                self.log.error("checkpoint failed", error=repr(exc))
                continue
            job.finish()

    async def _every(self, key: str, work) -> None:
        """Run `work()` every `key` ms (Kafka's scheduler tasks: checkpoints, retention, cleaning)."""
        interval = self.config[key] / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                work()
            except OSError as exc:
                self.log.error("periodic log task failed", task=key, error=repr(exc))

    async def _cleaning(self) -> None:
        """The log cleaner every log.cleaner.backoff.ms, one segment at a time: Kafka's cleaner is a
        thread of its own, and a pass over a large compacted log must not hold up requests."""
        interval = self.config["log.cleaner.backoff.ms"] / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                for _ in self.logs.cleaner_steps():
                    await asyncio.sleep(0)
            except OSError as exc:
                self.log.error("periodic log task failed", task="log.cleaner.backoff.ms", error=repr(exc))

    # --- lookups for handlers ----------------------------------------------------------------------

    def leader_partition(self, topic: str, index: int, current_leader_epoch: int = -1) -> Partition:
        """The partition if this broker leads it, else KafkaError (Kafka's getPartitionOrException)."""
        return self.hosted.leader_partition(topic, index, current_leader_epoch)

    def current_leader(self, topic: str, index: int) -> tuple[int, int]:
        """(leader id, leader epoch) as the metadata cache knows them, for NOT_LEADER hints."""
        return self.hosted.current_leader(topic, index)

    def fetch_session_partitions(self, session_id: int) -> tuple[tuple[str, int], ...]:
        """What a follower's fetch session holds, for the fault kit (a `replication` fault on a
        topic hits the incremental fetches that do not name it)."""
        return self.fetch_sessions.partitions_of(session_id)

    def log_config(self, topic: str) -> LogConfig:
        dynamic, dynamic_default, static = self._broker_layers()
        try:
            entries = effective_topic_configs(self.cache.topic_configs.get(topic, {}), dynamic, dynamic_default,
                                              static, include_synonyms=False)
        except ConfigValidationError as exc:
            self.log.error("bad topic config, using defaults", topic=topic, error=exc.message)
            return LogConfig.from_topic_configs({})
        return LogConfig.from_topic_configs({e.name: e.value for e in entries if e.value is not None})

    def on_created(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """`listener(topic)` once a topic whose replicas were deferred (a bulk creation) has them
        (a coordinator runtime waits for its internal topic so); returns the unsubscribe function."""
        return self.pacer.on_created(listener)

    # --- the metadata cache's events -----------------------------------------------------------------

    def _on_cache_event(self, event: tuple) -> None:
        kind = event[0]
        if kind == "partition":
            self._apply(event[1], event[2])
        elif kind == "topic":
            self._apply_topic(event[1])
        elif kind == "topic_config":
            topic = event[1]
            if self._held.get(topic):
                config = self.log_config(topic)
                for index in self._held[topic]:
                    self.partitions[(topic, index)].reconfigure(config)
            self._apply_topic(topic)  # replicas waiting for the topic's configs
        elif kind == "broker":
            self.fetchers.broker_changed(event[1])

    def _apply_topic(self, topic: str) -> None:
        for _ in self._apply_topic_steps(topic):
            pass

    def _apply_topic_steps(self, topic: str):
        """Every partition of `topic` as the cache says (replicas deleted, made, led or followed),
        yielding after every CHUNK partitions (the pacer's background task)."""
        assignment = self.cache.all_topics.get(topic)
        wanted = sorted(assignment.partitions) if assignment is not None else []
        for index in sorted(self._held.get(topic, set()).difference(wanted)):
            self._delete(topic, index)
        configs: list[LogConfig] = []  # the topic's log config, worked out once for all its new replicas
        for n, index in enumerate(wanted, 1):
            self._apply(topic, index, configs)
            if n % CHUNK == 0:
                yield

    def _apply(self, topic: str, index: int, configs: list[LogConfig] | None = None) -> None:
        """Become leader or follower as the partition state says (Kafka's LeaderAndIsr handling)."""
        key = (topic, index)
        replicas = self.hosted.assigned(topic, index)
        if replicas is None:
            if key in self.partitions and (topic not in self.cache.all_topics or topic in self.cache.deleting
                                           or index not in self.cache.all_topics[topic].partitions
                                           or self.broker_id not in self.cache.all_topics[topic].partitions[index]):
                self._delete(topic, index)
            return
        state = self.cache.partition_states.get(key)
        if state is None:
            return  # the state znode is not written (or not read) yet
        partition = self.partitions.get(key)
        if partition is None and topic in self.cache.configs_pending:
            # Known from the controller's request before the topic's config overrides are read
            # (as Kafka's broker reads them from ZooKeeper to create the log): created with them.
            return
        if partition is None and self.pacer.defer(topic):
            return  # made by the pacer's background task, then led or followed as the cache says then
        if partition is None:
            assignment = self.cache.all_topics[topic]  # its topic id replaces a log of an earlier same-named topic
            if configs is None:
                configs = []
            if not configs:  # the caller's list keeps it for the topic's next partitions
                configs.append(self.log_config(topic))
            log = self.logs.get_or_create(topic, index, configs[0], topic_id=assignment.topic_id)
            saved_hw = self._saved_hws.pop(key, None)
            if saved_hw is not None:
                log.high_watermark = saved_hw
            partition = self.partitions[key] = Partition(topic, index, log, self.broker_id)
            self._held.setdefault(topic, set()).add(index)
        partition_epoch = getattr(state, "zk_version", -1)
        if state.leader == self.broker_id:
            self.fetchers.remove(key)
            if partition.become_leader(state.leader_epoch, state.isr, replicas, partition_epoch, now_ms()):
                self.roles.note("became leader", topic, index, epoch=state.leader_epoch, isr=state.isr,
                                end_offset=partition.log_end_offset)
            partition.maybe_advance_high_watermark()
        else:
            if partition.become_follower(state.leader, state.leader_epoch, state.isr, replicas, partition_epoch):
                self.roles.note("became follower", topic, index, leader=state.leader, epoch=state.leader_epoch)
            self.fetchers.follow(key, state.leader)
        self.purgatory.wake(key)  # waiters re-check: a fenced produce or fetch answers now
        if self.logs.unsynced:
            self._sync_soon()

    def _sync_soon(self) -> None:
        """The files new replicas and leaderships wrote (partition.metadata, leader-epoch-checkpoint)
        fsynced by a worker thread after this batch: a thousand fsyncs on the event loop took seconds."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop (unit tests): at once
            fsync_files(self.logs.take_unsynced())
            return
        if self._syncing is None or self._syncing.done():
            self._syncing = self.spawn(self._fsync_written(), "replica-files-sync")

    async def _fsync_written(self) -> None:
        await asyncio.sleep(0)
        while paths := self.logs.take_unsynced():
            try:
                await asyncio.to_thread(fsync_files, paths)
            except OSError as exc:
                self.log.error("replica files fsync failed", error=repr(exc))

    def _delete(self, topic: str, index: int) -> None:
        key = (topic, index)
        self.fetchers.remove(key)
        if self.partitions.pop(key, None) is not None:
            held = self._held[topic]
            held.discard(index)
            if not held:
                del self._held[topic]
        self.logs.delete(topic, index)
        self.purgatory.wake(key)
        self.roles.note("deleted replica", topic, index)

    # --- log directories ----------------------------------------------------------------------------

    def alter_log_dir(self, topic: str, index: int, log_dir: str) -> ErrorCode:
        """ReplicaManager.alterReplicaLogDirs for one partition: its replica's log moves into
        `log_dir` at once (Kafka copies it into a future log and swaps; here the log is moved while
        nothing else runs, fsynced first, so no acknowledged record is lost and reads go on)."""
        if len(f"{topic}-{index}") + len(".00000000000000000000000000000000-future") > 255:
            return ErrorCode.invalid_topic_exception  # UnifiedLog.logFutureDirName too long
        if not self.logs.has_log_dir(log_dir):
            return ErrorCode.log_dir_not_found
        try:
            self.logs.move(topic, index, log_dir)  # unhosted: where it will be created
        except KafkaError as exc:
            self.log.warning("unable to alter log dir", topic=topic, partition=index, error=exc.message)
            return ErrorCode.kafka_storage_error
        if (topic, index) in self.partitions:
            return ErrorCode.none
        if index in self.cache.partitions_of(topic):
            return ErrorCode.replica_not_available  # Kafka keeps it for AlterReplicaLogDirs (not NOT_LEADER)
        return ErrorCode.unknown_topic_or_partition

    # --- appends and reads: delegated ------------------------------------------------------------------

    async def append_records(self, entries, acks: int, timeout_ms: int, origin: str = "client", on_appended=None):
        """Produce (and WriteTxnMarkers, origin "coordinator"): see appends.Appender.append_records."""
        appender: Appender = self.appender
        return await appender.append_records(entries, acks, timeout_ms, origin, on_appended)

    def append_local(self, entries, acks: int, origin: str = "client"):
        """append_records' first half, at once (the group coordinator pipelines its batches): see
        appends.Appender.append_local; the second half is `wait_for_acks`."""
        appender: Appender = self.appender
        return appender.append_local(entries, acks, origin)

    async def wait_for_acks(self, results, timeout_ms: int) -> None:
        """acks=all's wait for what `append_local` appended: see appends.Appender.wait_for_acks."""
        appender: Appender = self.appender
        await appender.wait_for_acks(results, timeout_ms)

    async def fetch(self, wants, replica_id: int, isolation_level: int, max_wait_ms: int, min_bytes: int,
                    max_bytes: int, hard_max_bytes: bool = False, client=None):
        """Fetch: see reads.Reader.fetch."""
        return await self.reader.fetch(wants, replica_id, isolation_level, max_wait_ms, min_bytes, max_bytes,
                                       hard_max_bytes, client)

    def offset_for(self, topic: str, index: int, timestamp: int, isolation_level: int, current_leader_epoch: int):
        """ListOffsets: see reads.Reader.offset_for."""
        return self.reader.offset_for(topic, index, timestamp, isolation_level, current_leader_epoch)

    def legacy_offsets(self, topic: str, index: int, timestamp: int, max_num_offsets: int,
                       from_consumer: bool) -> list[int]:
        """ListOffsets v0: see reads.Reader.legacy_offsets."""
        return self.reader.legacy_offsets(topic, index, timestamp, max_num_offsets, from_consumer)

    def end_offset_for_epoch(self, topic: str, index: int, epoch: int, current_leader_epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (largest epoch <= `epoch`, its end offset) from the leader's epoch cache."""
        partition = self.leader_partition(topic, index, current_leader_epoch)
        return partition.log.end_offset_for_epoch(epoch)

    def delete_records(self, topic: str, index: int, offset: int) -> int:
        """DeleteRecords on the leader: moves its log start offset to `offset` (-1: the high
        watermark) and returns it; the caller then waits for the replicas (low_watermarks)."""
        log = self.leader_partition(topic, index).log
        target = log.high_watermark if offset == -1 else offset
        if target < 0 or target > log.high_watermark:
            raise KafkaError(ErrorCode.offset_out_of_range)
        if target > log.log_start_offset:
            log.advance_log_start_offset(target)
        return target

    async def low_watermarks(self, targets: dict[tuple[str, int], int], timeout_ms: int) -> dict:
        """DelayedDeleteRecords: per partition, the smallest log start offset of its live replicas
        once it reached the target, else an ErrorCode (REQUEST_TIMED_OUT at the timeout,
        NOT_LEADER_OR_FOLLOWER when leadership moved meanwhile)."""
        epochs = {key: self.partitions[key].leader_epoch for key in targets}

        def outcome(key: tuple[str, int]):
            partition = self.partitions.get(key)
            if partition is None or not partition.is_leader or partition.leader_epoch != epochs[key]:
                return ErrorCode.not_leader_or_follower
            low = partition.low_watermark(set(self.cache.brokers) | {self.broker_id})
            return low if low >= targets[key] else None

        deadline = time.monotonic() + max(timeout_ms, 0) / 1000
        await self.purgatory.wait(targets.keys(), lambda: all(outcome(k) is not None for k in targets), deadline)
        return {key: ErrorCode.request_timed_out if (o := outcome(key)) is None else o for key in targets}

    def high_watermark_moved(self, partition: Partition) -> None:
        """Wake whoever waits on this partition (acks=all produces, consumers' long polls)."""
        self.hosted.high_watermark_moved(partition)
