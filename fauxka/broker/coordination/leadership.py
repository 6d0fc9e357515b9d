"""How a coordinator runtime follows its internal topic's leadership (Kafka's onElection /
onResignation in ZooKeeper mode): the metadata cache's ("partition", topic, p) events, applied
by the replica manager first (it subscribed earlier), have the runtime load p where this broker
leads it and unload it elsewhere; a ("topic", topic) event (created, grown, deleted) checks every
partition again, as does the replica manager's word that it made replicas it had deferred (a
bulk of new replicas is made in the background: replication/creation_pacer.py). The runtime's
partition count follows the topic's assignment."""

from fauxka.coordinator.runtime import CoordinatorRuntime

from ..metadata_cache import MetadataCache
from ..replication.replica_manager import ReplicaManager


class TopicLeadership:
    def __init__(self, topic: str, cache: MetadataCache, replicas: ReplicaManager, runtime: CoordinatorRuntime):
        """`runtime`: the coordinator runtime of `topic`: its `became_leader`, `lost_leadership`,
        `partitions` and `num_partitions`."""
        self._topic = topic
        self._cache = cache
        self._replicas = replicas
        self._runtime = runtime
        self._unsubscribe = None
        self._unsubscribe_created = None

    def start(self) -> None:
        """After the replica manager started (its cache listener runs before ours)."""
        self._unsubscribe = self._cache.subscribe(self._on_cache_event)
        self._unsubscribe_created = self._replicas.on_created(self._on_created)
        self._sync_partition_count()
        for index in self._held():
            self._apply(index)

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._unsubscribe_created is not None:
            self._unsubscribe_created()

    def _on_created(self, topic: str) -> None:
        if topic == self._topic:
            self._on_cache_event(("topic", topic))

    def _held(self) -> list[int]:
        return [index for topic, index in list(self._replicas.partitions) if topic == self._topic]

    def _sync_partition_count(self) -> None:
        assignment = self._cache.topics.get(self._topic)
        if assignment is not None and assignment.partitions:
            self._runtime.num_partitions = len(assignment.partitions)

    def _on_cache_event(self, event: tuple) -> None:
        if event[0] == "partition" and event[1] == self._topic:
            self._sync_partition_count()
            self._apply(event[2])
        elif event[0] in ("topic", "topic_config") and event[1] == self._topic:
            # topic_config: replicas first heard of from the controller's LeaderAndIsr wait for the
            # topic's config overrides, and the replica manager creates (and leads) them on this event
            self._sync_partition_count()
            for index in {*self._runtime.partitions, *self._held()}:
                self._apply(index)

    def _apply(self, index: int) -> None:
        """The replica manager's partition decides: loaded where this broker leads it, else forgotten."""
        replica = self._replicas.partitions.get((self._topic, index))
        if replica is not None and replica.is_leader:
            self._runtime.became_leader(index, replica.leader_epoch)
        else:
            self._runtime.lost_leadership(index)
