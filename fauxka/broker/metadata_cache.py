"""What this broker knows of the cluster, fed by the controller's requests and ZooKeeper watches.

Every broker keeps one. Readers get plain data; interested parties (the
purgatory, later) subscribe to change events instead of polling.

Topics and partition states come two ways, as fast as the faster one: pushed by the active
controller (UpdateMetadata, LeaderAndIsr, StopReplica: fauxka/broker/metadata_pushed.py), as
Kafka's ZooKeeper-mode brokers learn them, and from the watches on their znodes (ZooKeeper is the
store of record; the watches are the fallback). A partition state is taken only when its znode version (the
partition epoch) is newer than the one held, whichever way it came.

What clients are told of (`topics`) is apart from what the replicas follow (`all_topics`): a
partition is announced by UpdateMetadata, by its topic's znode or by this controller's own write,
which name every partition of a new topic (or every new one of CreatePartitions) at once; a
LeaderAndIsr names only the partitions this broker replicates, and never adds to what Metadata
answers (as in Kafka, where it does not touch the metadata cache). A client never sees a topic with
fewer partitions than it has: a keyed producer hashes over the count it is told. How far the controller's
writes are applied, here and on every broker, is fauxka/broker/metadata_versions.py's side.
"""

from collections.abc import Mapping
from typing import Any, Callable, Iterable, Iterator

from fauxka.zkstore import Stat, ZkStore
from fauxka.zkstore import paths as zp
from fauxka.zkstore.watch_set import WatchSet

from .metadata_pushed import PushedMetadata
from .metadata_versions import MetadataVersions
from .served_generations import ServedGenerations

BROKER_CONFIGS = zp.entity_configs_path("brokers")  # dynamic broker configs: one child per broker id, and <default>
USER_CONFIGS = zp.entity_configs_path("users")  # one child per (sanitized) user: SCRAM credentials and quotas


class MetadataCache(PushedMetadata, MetadataVersions):
    def __init__(self, zk: ZkStore, log: Any):
        self._zk = zk
        self._log = log
        self.brokers: dict[int, zp.BrokerRegistration] = {}
        self.broker_epochs: dict[int, int] = {}  # Kafka's broker epoch: the czxid of /brokers/ids/<id>
        self.controller_id: int = -1
        self.controller_epoch: int = 0  # /controller_epoch as last read
        self.pushed_controller_epoch: int = 0  # the newest epoch of an accepted controller request
        self.cluster_id: str | None = None
        # /feature (FinalizedFeatureChangeListener): the finalized levels and their epoch (the
        # znode's version), -1 while there is none or the feature versioning system is disabled
        self.finalized_features: dict[str, int] = {}
        self.features_epoch: int = -1
        self._topics: dict[str, zp.TopicAssignment] = {}  # every topic ZooKeeper lists, as the controller knows them
        # the announced part of each topic (most often the same object as in _topics): all its
        # partitions, or those announced so far while a LeaderAndIsr has named more
        self._announced: dict[str, zp.TopicAssignment] = {}
        self.topics = _Served(self._announced, self)  # what clients are told of: none being deleted
        self.partition_states: dict[tuple[str, int], zp.PartitionState] = {}
        self.deleting: set[str] = set()
        self.topic_configs: dict[str, dict[str, str]] = {}  # overrides from /config/topics/<t>
        self.broker_configs: dict[str, dict[str, str]] = {}  # /config/brokers/<id> and /config/brokers/<default>
        self.user_configs: dict[str, dict[str, str]] = {}  # /config/users/<sanitized user> (SCRAM credentials)
        # topics first heard of from the controller whose /config/topics/<t> is not read yet: their
        # replicas wait for it (a Kafka broker reads a topic's overrides to create its log)
        self.configs_pending: set[str] = set()
        self._init_versions()  # seen_version, applied_version, applied_by_broker (metadata_versions.py)
        self._owned: set[str] = set()  # topics the controller here wrote and watches only when needed
        self._listed: set[str] = set()  # /brokers/topics as last read
        self._watches = WatchSet(zk)
        self._listeners: list[Callable[[tuple], None]] = []
        self.served = ServedGenerations()  # what the Metadata handler's kept answers were built at

    # --- life cycle ----------------------------------------------------------

    def start(self) -> None:
        self._watch("children", zp.BROKER_IDS, self._on_broker_ids)
        self._watch("data", zp.CONTROLLER, self._on_controller)
        self._watch("data", zp.CONTROLLER_EPOCH, self._on_controller_epoch)
        self._watch("data", zp.CLUSTER_ID, self._on_cluster_id)
        self._watch("data", zp.FEATURE, self._on_feature)
        self._watch("children", zp.TOPICS, self._on_topics)
        self._watch("children", zp.DELETE_TOPICS, self._on_delete_topics)
        self._watch("children", BROKER_CONFIGS, self._on_broker_config_entities)
        self._watch("children", USER_CONFIGS, self._on_user_config_entities)
        self._watch_versions()

    async def wait_synced(self, timeout_s: float) -> None:
        """Until every watch has delivered its first answer (brokers, topics, partitions...)."""
        await self._watches.wait_synced(timeout_s)

    def stop(self) -> None:
        self._watches.cancel_all()

    def subscribe(self, listener: Callable[[tuple], None]) -> Callable[[], None]:
        """`listener(event)` for every change; returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    # --- queries -------------------------------------------------------------

    def live_broker_ids(self) -> list[int]:
        return sorted(self.brokers)

    # `topics`, `partitions_of` and `topic_by_id` answer as Kafka's ZkMetadataCache: a topic queued
    # for deletion (/admin/delete_topics/<t>) is no longer there, as Kafka's controller tells every
    # broker at once (TopicDeletionManager.onTopicDeletion: UpdateMetadata with the partitions'
    # leader LeaderDuringDelete, -2, which ZkMetadataCache.updateMetadata removes), while its znodes
    # and replicas go later. The controller and the replicas read `all_topics`: ZooKeeper's list.

    @property
    def all_topics(self) -> dict[str, zp.TopicAssignment]:
        return self._topics

    def partitions_of(self, topic: str) -> dict[int, list[int]]:
        assignment = self.topics.get(topic)
        return assignment.partitions if assignment else {}

    def topic_by_id(self, topic_id) -> str | None:
        return next((name for name, a in self._announced.items()
                     if a.topic_id == topic_id and name not in self.deleting), None)

    # --- watch plumbing -------------------------------------------------------

    def _watch(self, kind: str, path: str, callback: Callable[[Any], None]) -> None:
        self._watches.add(kind, path, callback)

    def _unwatch(self, path: str) -> None:
        self._watches.remove(path)

    def _emit(self, event: tuple) -> None:
        self.served.note(event)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception as exc:
                self._log.exception("metadata listener failed", error=repr(exc))

    # --- brokers and controller ------------------------------------------------

    def _on_broker_ids(self, children: list[str] | None) -> None:
        ids = {int(c) for c in children or () if c.isdigit()}
        for gone in set(self.brokers) - ids:
            self._unwatch(zp.broker_path(gone))
            del self.brokers[gone]
            self.broker_epochs.pop(gone, None)
            self._emit(("broker", gone))
        for broker_id in ids:
            self._watch("data", zp.broker_path(broker_id),
                        lambda v, b=broker_id: self._on_broker(b, v))

    def _on_broker(self, broker_id: int, value: tuple[bytes, Stat] | None) -> None:
        if value is None:
            self.brokers.pop(broker_id, None)
            self.broker_epochs.pop(broker_id, None)
        else:
            try:
                self.brokers[broker_id] = zp.decode_broker(broker_id, value[0])
                self.broker_epochs[broker_id] = value[1].czxid
            except (ValueError, KeyError) as exc:
                self._log.error("bad broker registration", broker=broker_id, error=repr(exc))
                return
        self._emit(("broker", broker_id))

    def _on_controller(self, value: tuple[bytes, Stat] | None) -> None:
        try:
            self.controller_id = zp.decode_controller(value[0]) if value else -1
        except (ValueError, KeyError):
            self.controller_id = -1
        self._emit(("controller", self.controller_id))

    def _on_controller_epoch(self, value: tuple[bytes, Stat] | None) -> None:
        self.controller_epoch = zp.decode_epoch(value[0]) if value else 0

    def accept_controller_epoch(self, epoch: int) -> bool:
        """A controller request's epoch: False when older than the newest known (Kafka's broker
        answers STALE_CONTROLLER_EPOCH), else it becomes the newest."""
        if epoch < max(self.controller_epoch, self.pushed_controller_epoch):
            return False
        self.pushed_controller_epoch = epoch
        return True

    def _on_cluster_id(self, value: tuple[bytes, Stat] | None) -> None:
        self.cluster_id = zp.decode_cluster_id(value[0]) if value else None

    def _on_feature(self, value: tuple[bytes, Stat] | None) -> None:
        try:
            status, features = zp.decode_feature(value[0]) if value else (0, {})
        except (ValueError, KeyError, TypeError) as exc:
            self._log.error("bad feature znode", error=repr(exc))
            return
        enabled = status == zp.FEATURE_ENABLED
        self.finalized_features = features if enabled else {}
        self.features_epoch = value[1].version if enabled else -1
        self._emit(("features", zp.FEATURE))  # keyed by the path: waiters on the write wake

    # --- topics ------------------------------------------------------------------

    # The active controller is the only writer of a topic's znodes and of the topic list. What it
    # creates or deletes it records here at once (as Kafka's controller knows what it wrote) and
    # does not read back: re-reading thousands of znodes it has just written, or the whole topic
    # list after every creation, would cost more than the write. The watches of the topics it
    # created are armed before it changes such a topic again (watch_owned); everything is watched
    # again when it resigns, when another broker may write. Reads answered before a write cannot
    # land after its record: kazoo hands answers over in the order ZooKeeper sent them.

    def take_ownership(self) -> None:
        """This broker became the active controller: read the topic list once more (that read shows
        every write of earlier controllers, which were fenced at our election), then stop following it."""
        self._watches.resume(zp.TOPICS)
        self._watches.pause(zp.TOPICS)

    def release_ownership(self) -> None:
        """This broker stopped being the active controller: watch everything again."""
        self.watch_owned()
        self._watches.resume(zp.TOPICS)

    def expect_written_topics(self, topics: Iterable[str]) -> None:
        """Topics about to be created by this (controller) broker: listing them arms no watch."""
        self._owned.update(t for t in topics if zp.topic_path(t) not in self._watches)

    def record_written_topic(self, topic: str, assignment: zp.TopicAssignment, configs: dict[str, str],
                             states: dict[int, zp.PartitionState]) -> None:
        """A topic expected above whose creation multi-op has been applied."""
        previous = self._topics.get(topic)
        for partition in (previous.partitions if previous else ()):
            if partition not in states:
                self.partition_states.pop((topic, partition), None)
        self._topics[topic] = self._announced[topic] = assignment
        self.topic_configs[topic] = dict(configs)
        for partition, state in states.items():
            self.partition_states[(topic, partition)] = state
        self._listed.add(topic)
        self._emit(("topic", topic))

    def record_deleted_topic(self, topic: str) -> None:
        """A topic whose deletion multi-op this broker, as active controller, has just applied."""
        self._listed.discard(topic)
        if topic in self._topics:
            self._drop_topic(topic)

    def watch_owned(self, topics: Iterable[str] | None = None) -> None:
        """Watch expected or recorded topics again (all of them when `topics` is None); one whose
        creation failed is only forgotten unless ZooKeeper lists it."""
        for topic in list(self._owned if topics is None else self._owned.intersection(topics)):
            self._owned.discard(topic)
            if topic in self._topics or topic in self._listed:
                self._watch_topic(topic)

    def _on_topics(self, children: list[str] | None) -> None:
        names = self._listed = set(children or ())
        for gone in set(self._topics) - names:
            self._drop_topic(gone)
        # Every topic in the cache is watched or recorded by this controller (owned): only the
        # others need a look, as set operations, not a path per listed topic.
        for name in names - self._topics.keys() - self._owned:
            self._watch_topic(name)  # idempotent: a watch whose first read is pending stays as it is

    def _watch_topic(self, name: str) -> None:
        self._watch("data", zp.topic_path(name), lambda v, t=name: self._on_topic(t, v))
        self._watch("data", zp.entity_config_path("topics", name),
                    lambda v, t=name: self._on_entity_config(self.topic_configs, "topic_config", t, v))

    def _drop_topic(self, topic: str) -> None:
        self._owned.discard(topic)
        self.configs_pending.discard(topic)
        assignment = self._topics.pop(topic, None)
        self._announced.pop(topic, None)
        self._unwatch(zp.topic_path(topic))
        self._unwatch(zp.entity_config_path("topics", topic))
        self.topic_configs.pop(topic, None)
        for partition in (assignment.partitions if assignment else ()):
            self._unwatch(zp.partition_state_path(topic, partition))
            self.partition_states.pop((topic, partition), None)
        self._emit(("topic", topic))

    def record_assignment(self, topic: str, assignment: zp.TopicAssignment) -> None:
        """A topic znode the active controller has just set (a partition reassignment)."""
        if topic in self._topics:
            self._apply_assignment(topic, assignment)

    def _on_topic(self, topic: str, value: tuple[bytes, Stat] | None) -> None:
        if value is None:
            if topic in self._topics:
                self._drop_topic(topic)
            return
        try:
            assignment = zp.decode_topic(value[0])
        except (ValueError, KeyError) as exc:
            self._log.error("bad topic znode", topic=topic, error=repr(exc))
            return
        self._apply_assignment(topic, assignment)

    def _apply_assignment(self, topic: str, assignment: zp.TopicAssignment) -> None:
        """The topic's whole assignment (its znode, or this controller's write): all announced."""
        self._topics[topic] = self._announced[topic] = assignment
        for partition in assignment.partitions:
            self._watch("data", zp.partition_state_path(topic, partition),
                        lambda v, t=topic, p=partition: self._on_partition_state(t, p, v))
        self._emit(("topic", topic))

    def _on_entity_config(self, store: dict[str, dict[str, str]], event: str, name: str,
                          value: tuple[bytes, Stat] | None) -> None:
        """A /config/topics/<t> or /config/brokers/<b> znode: its overrides into `store`, then `event`."""
        try:
            store[name] = zp.decode_entity_config(value[0]) if value else {}
        except (ValueError, KeyError) as exc:
            self._log.error("bad config znode", kind=event, entity=name, error=repr(exc))
            if not (store is self.topic_configs and name in self.configs_pending):
                return  # else its waiting replicas go on, with the configs held (as before the read)
        if store is self.topic_configs:
            self.configs_pending.discard(name)
        self._emit((event, name))

    def record_partition_state(self, topic: str, partition: int, state: zp.PartitionState) -> None:
        """A partition state znode the active controller has just written (state.zk_version is the
        version the write returned): Kafka's controller updates its context from its own writes."""
        if topic in self._topics:
            self.partition_states[(topic, partition)] = state
            self._emit(("partition", topic, partition))

    def _on_partition_state(self, topic: str, partition: int, value: tuple[bytes, Stat] | None) -> None:
        if value is None:
            self.partition_states.pop((topic, partition), None)
        else:
            known = self.partition_states.get((topic, partition))
            if known is not None and known.zk_version >= value[1].version:
                return  # what the controller here recorded or pushed, or older
            try:
                self.partition_states[(topic, partition)] = zp.decode_partition_state(value[0], value[1].version)
            except (ValueError, KeyError) as exc:
                self._log.error("bad partition state", topic=topic, partition=partition, error=repr(exc))
                return
        self._emit(("partition", topic, partition))

    def _on_delete_topics(self, children: list[str] | None) -> None:
        previous, self.deleting = self.deleting, set(children or ())
        self._emit(("deleting",))
        for topic in sorted(previous ^ self.deleting):
            if topic in self._topics:
                self._emit(("topic", topic))  # it left (or, marker gone, came back to) `topics`

    # --- dynamic broker configs ---------------------------------------------------

    def _on_broker_config_entities(self, children: list[str] | None) -> None:
        names = set(children or ())
        for gone in set(self.broker_configs) - names:
            self._unwatch(zp.entity_config_path("brokers", gone))
            del self.broker_configs[gone]
            self._emit(("broker_config", gone))
        for name in names:
            self._watch("data", zp.entity_config_path("brokers", name),
                        lambda v, n=name: self._on_entity_config(self.broker_configs, "broker_config", n, v))

    # --- user configs (SCRAM credentials; quotas are read from ZooKeeper when described) ---------

    def _on_user_config_entities(self, children: list[str] | None) -> None:
        names = set(children or ())
        for gone in set(self.user_configs) - names:
            self._unwatch(zp.entity_config_path("users", gone))
            del self.user_configs[gone]
        for name in names:
            self._watch("data", zp.entity_config_path("users", name), lambda v, n=name: self._on_user_config(n, v))

    def _on_user_config(self, name: str, value: tuple[bytes, Stat] | None) -> None:
        try:
            self.user_configs[name] = zp.decode_entity_config(value[0]) if value and value[0] else {}
        except (ValueError, KeyError, AttributeError) as exc:
            self._log.error("bad user config znode", entity=name, error=repr(exc))


class _Served(Mapping):
    """The topics a client is told of: ZooKeeper's, less those queued for deletion (a live view)."""

    def __init__(self, topics: dict[str, zp.TopicAssignment], cache: MetadataCache):
        self._topics = topics
        self._cache = cache

    def __getitem__(self, name: str) -> zp.TopicAssignment:
        if name in self._cache.deleting:
            raise KeyError(name)
        return self._topics[name]

    def __contains__(self, name: object) -> bool:
        return name in self._topics and name not in self._cache.deleting

    def __iter__(self) -> Iterator[str]:
        deleting = self._cache.deleting
        return (name for name in list(self._topics) if name not in deleting)

    def __len__(self) -> int:
        deleting = self._cache.deleting
        return len(self._topics) - sum(1 for name in deleting if name in self._topics)
