"""`broker.coordinators`: the coordinator roles this broker holds, wired to the data plane.

The group coordinator runs while this broker leads __consumer_offsets partitions: the metadata
cache's ("partition", "__consumer_offsets", p) events, applied by the replica manager first (it
subscribed earlier), load or unload a partition (coordinator/group/runtime.py). `owns(role, key)` is
what broker/dispatch.py asks before a GROUP_COORDINATOR api runs. `ensure_offsets_topic` creates
__consumer_offsets on first need, as Kafka's FindCoordinator does (AutoTopicCreationManager with
the internal topic's configs).
"""

import asyncio
from typing import TYPE_CHECKING

from coordinator.group.config import GroupConfig
from coordinator.group.runtime import GROUP_METADATA_TOPIC, GroupRuntime
from model.errors import ErrorCode

from ..auto_create import internal_topic_spec
from .group_metrics import GroupMetrics
from .replica_host import ReplicaHost
from .txn_role import TxnCoordinator

if TYPE_CHECKING:
    from ..app import Broker


class Coordinators:
    def __init__(self, broker: "Broker"):
        self._broker = broker
        config = broker.config
        self.config = GroupConfig.from_broker(config.__getitem__)
        self.metrics = GroupMetrics(broker.metrics.registry, self)
        self.runtime = GroupRuntime(ReplicaHost(broker), self.config, config["offsets.topic.num.partitions"],
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
        return internal_topic_spec(self._broker, "offsets.topic.num.partitions", "offsets.topic.replication.factor",
                                   lambda _r: {"cleanup.policy": "compact", "compression.type": "producer",
                                               "segment.bytes": segment})
