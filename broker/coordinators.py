"""`broker.coordinators`: the coordinator roles this broker holds, wired to the data plane.

The group coordinator runs while this broker leads __consumer_offsets partitions: the metadata
cache's ("partition", "__consumer_offsets", p) events, applied by the replica manager first (it
subscribed earlier), load or unload a partition (coordinator/runtime.py). `owns(role, key)` is
what broker/dispatch.py asks before a GROUP_COORDINATOR api runs. `ensure_offsets_topic` creates
__consumer_offsets on first need, as Kafka's FindCoordinator does (AutoTopicCreationManager with
the internal topic's configs).
"""

import asyncio
import time
from typing import TYPE_CHECKING, Iterable

from coordinator.group.config import GroupConfig
from coordinator.runtime import GROUP_METADATA_TOPIC, CoordinatorRuntime
from model.errors import ErrorCode
from storage.batch import iter_headers
from storage.records import Record, build, control_type, decode

from .auto_create import internal_topic_spec
from .group_metrics import GroupMetrics
from .txn_coordinator import TxnCoordinator

if TYPE_CHECKING:
    from .app import Broker

_READ_BYTES = 1 << 20


class ReplicaHost:
    """coordinator.runtime.PartitionHost over the replica manager."""

    def __init__(self, broker: "Broker"):
        self._replicas = broker.replicas

    def leader_epoch(self, topic: str, partition: int) -> int | None:
        p = self._replicas.partitions.get((topic, partition))
        return p.leader_epoch if p is not None and p.is_leader else None

    def records(self, topic: str, partition: int) -> Iterable[tuple]:
        """(key, value, producer id, marker) of every record: producer id -1 outside transactions,
        marker True/False for a COMMIT/ABORT control record (key and value None), else None. Up to
        the log end as it is when each chunk is read, as Kafka's load (GroupMetadataManager's
        `def logEndOffset`): a transaction marker appended while the partition loads is replayed
        after the records it completes, never before them."""
        p = self._replicas.partitions.get((topic, partition))
        if p is None:
            return
        log = p.log
        position = log.log_start_offset
        while position < log.log_end_offset:
            buf = log.read(position, _READ_BYTES, log.log_end_offset, True)
            if not buf:
                return
            for header in iter_headers(buf):
                pid = header.producer_id if header.is_transactional else -1
                if header.is_control:
                    kind = control_type(buf, header)
                    if kind is not None:
                        yield None, None, pid, kind == 1
                else:
                    for record in decode(buf, header):
                        yield record.key, record.value, pid, None
                position = header.next_offset
        return

    async def append(self, topic: str, partition: int, records, timeout_ms: int,
                     producer: tuple[int, int] | None = None, appended=None) -> ErrorCode:
        """acks=all; `producer` (id, epoch): a transactional batch (TxnOffsetCommit's offsets);
        `appended()` runs once the leader's log has the batch (not when the append failed)."""
        batch = _batch(records, producer)
        key = (topic, partition)
        on_appended = None if appended is None else (lambda r: r[key].error == ErrorCode.none and appended())
        results = await self._replicas.append_records({key: batch}, -1, timeout_ms,
                                                      origin="client" if producer is None else "coordinator",
                                                      on_appended=on_appended)
        return results[(topic, partition)].error

    def begin_append(self, topic: str, partition: int, records, timeout_ms: int):
        """The batch is in the leader's log when this returns; the coroutine waits for acks=all
        (the produce purgatory's DelayedProduce), its deadline counted from now."""
        deadline = time.monotonic() + timeout_ms / 1000
        appender = self._replicas.appender
        results = appender.append_local({(topic, partition): _batch(records, None)}, -1)

        async def acked() -> ErrorCode:
            await appender.wait_for_acks(results, max(0, int((deadline - time.monotonic()) * 1000)))
            return results[(topic, partition)].error
        return acked()


def _batch(records, producer: tuple[int, int] | None) -> bytes:
    now = int(time.time() * 1000)
    pid, epoch = producer if producer is not None else (-1, -1)
    return bytes(build([Record(i, now, k, v, []) for i, (k, v) in enumerate(records)], 0,
                       transactional=producer is not None, producer_id=pid, producer_epoch=epoch))


class Coordinators:
    def __init__(self, broker: "Broker"):
        self._broker = broker
        config = broker.config
        self.config = GroupConfig.from_broker(config.__getitem__)
        self.metrics = GroupMetrics(broker.metrics.registry, self)
        self.runtime = CoordinatorRuntime(ReplicaHost(broker), self.config, config["offsets.topic.num.partitions"],
                                          log=broker.log.bind(component="groups"),
                                          commit_timeout_ms=config["offsets.commit.timeout.ms"], metrics=self.metrics)
        self.groups = self.runtime.groups
        self.txn = TxnCoordinator(broker, self.runtime.host)  # the transaction coordinator role
        self._unsubscribe = None
        self._tasks: set[asyncio.Task] = set()

    def start(self) -> None:
        """After the replica manager started (its cache listener runs before ours)."""
        self._unsubscribe = self._broker.cache.subscribe(self._on_cache_event)
        self._sync_partition_count()
        for (topic, index) in list(self._broker.replicas.partitions):
            if topic == GROUP_METADATA_TOPIC:
                self._apply(index)
        self.runtime.start(self.config.offsets_retention_check_interval_ms)
        self.txn.start()

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.txn.stop()
        await self.runtime.close()

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro, name="group-offsets-of-deleted-topic")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def owns(self, role, key: str) -> bool:
        return self.runtime.owns(role, key) and self.txn.runtime.owns(role, key)

    def status(self, group_id: str) -> ErrorCode:
        return self.runtime.status(group_id)

    # --- the metadata cache ----------------------------------------------------------------------------
    def _sync_partition_count(self) -> None:
        assignment = self._broker.cache.topics.get(GROUP_METADATA_TOPIC)
        if assignment is not None and assignment.partitions:
            self.runtime.num_partitions = len(assignment.partitions)

    def _on_cache_event(self, event: tuple) -> None:
        kind = event[0]
        if kind == "partition" and event[1] == GROUP_METADATA_TOPIC:
            self._sync_partition_count()
            self._apply(event[2])
        elif kind == "topic":
            topic = event[1]
            if topic == GROUP_METADATA_TOPIC:
                self._sync_partition_count()
                for index in list(self.runtime.partitions):
                    self._apply(index)
                for (t, index) in list(self._broker.replicas.partitions):
                    if t == topic:
                        self._apply(index)
            elif topic not in self._broker.cache.topics:
                self._spawn(self.groups.remove_topic_offsets(topic))  # deleting a topic removes its offsets

    def _apply(self, index: int) -> None:
        self.runtime.loads.follow(index, self._broker.replicas.partitions.get((GROUP_METADATA_TOPIC, index)))

    # --- __consumer_offsets ------------------------------------------------------------------------------
    def offsets_topic_spec(self) -> tuple[int, int, dict[str, str]]:
        """(partitions, replication factor, configs) as Kafka's GroupCoordinator.offsetsTopicConfigs."""
        segment = str(self._broker.config["offsets.topic.segment.bytes"])
        return internal_topic_spec(self._broker.config, self._broker.cache, "offsets.topic.num.partitions",
                                   "offsets.topic.replication.factor",
                                   lambda _r: {"cleanup.policy": "compact", "compression.type": "producer",
                                               "segment.bytes": segment})
