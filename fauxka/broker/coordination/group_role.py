"""The group coordinator role of this broker (the Broker's `group_role`, fauxka/broker/app.py), wired to the data plane.

It runs while this broker leads __consumer_offsets partitions (leadership.py loads and unloads
them in fauxka/coordinator/group/runtime.py). `owns(key)` is what fauxka/broker/dispatch.py asks before a
GROUP_COORDINATOR api runs. `topic_spec` is what __consumer_offsets is created with on first
need, as Kafka's FindCoordinator does (AutoTopicCreationManager with the internal topic's configs).
Deleting a topic removes the offsets committed for it.
"""

import asyncio

from fauxka.coordinator.group.config import GroupConfig
from fauxka.coordinator.group.runtime import GROUP_METADATA_TOPIC, GROUP_ROLE, GroupRuntime
from fauxka.model.errors import ErrorCode

from ..config import BrokerConfig, internal_topic_spec
from ..metadata_cache import MetadataCache
from ..replication.replica_manager import ReplicaManager
from .group_metrics import GroupCounters, GroupMetrics
from .leadership import TopicLeadership
from .replica_host import ReplicaHost


class GroupRole:
    def __init__(self, config: BrokerConfig, cache: MetadataCache, replicas: ReplicaManager, registry, log):
        self._config = config
        self._cache = cache
        group_config = GroupConfig.from_broker(config.__getitem__)
        self._retention_check_ms = group_config.offsets_retention_check_interval_ms
        host = ReplicaHost(replicas)
        self.runtime = GroupRuntime(host, group_config, config["offsets.topic.num.partitions"],
                                    log=log.bind(component="groups"),
                                    commit_timeout_ms=config["offsets.commit.timeout.ms"],
                                    metrics=GroupCounters(registry))
        self.groups = self.runtime.groups
        self.metrics = GroupMetrics(registry, self.groups, self.runtime.loads, host)
        self._leadership = TopicLeadership(GROUP_METADATA_TOPIC, cache, replicas, self.runtime)
        self._unsubscribe = None
        self._tasks: set[asyncio.Task] = set()

    def start(self) -> None:
        """After the replica manager started (its cache listener runs before ours)."""
        self._leadership.start()
        self._unsubscribe = self._cache.subscribe(self._on_cache_event)
        self.runtime.start(self._retention_check_ms)

    async def stop(self) -> None:
        self._leadership.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.runtime.close()

    def owns(self, group_id: str) -> bool:
        return self.runtime.owns(GROUP_ROLE, group_id)

    def status(self, group_id: str) -> ErrorCode:
        return self.runtime.status(group_id)

    def partition_of(self, group_id: str) -> int:
        return self.runtime.partition_of(group_id)

    def loading(self) -> bool:
        return self.runtime.loading()

    def txn_marker_written(self, producer_id: int, commit: bool, partition: int) -> None:
        """A producer's COMMIT/ABORT marker is in a __consumer_offsets partition's log (txn_markers.py)."""
        self.runtime.txn_marker_written(producer_id, commit, partition)

    def _on_cache_event(self, event: tuple) -> None:
        if event[0] == "topic" and event[1] != GROUP_METADATA_TOPIC and event[1] not in self._cache.topics:
            task = asyncio.get_running_loop().create_task(self.groups.remove_topic_offsets(event[1]),
                                                          name="group-offsets-of-deleted-topic")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def topic_spec(self) -> tuple[int, int, dict[str, str]]:
        """(partitions, replication factor, configs) of __consumer_offsets, as Kafka's
        GroupCoordinator.offsetsTopicConfigs."""
        segment = str(self._config["offsets.topic.segment.bytes"])
        return internal_topic_spec(self._config, len(self._cache.brokers), "offsets.topic.num.partitions",
                                   "offsets.topic.replication.factor",
                                   lambda _r: {"cleanup.policy": "compact", "compression.type": "producer",
                                               "segment.bytes": segment})
