"""The metadata cache's side that applies what the active controller pushes (UpdateMetadata,
LeaderAndIsr, StopReplica), as Kafka's ZooKeeper-mode brokers learn topics and partition states.

A mixin of fauxka/broker/metadata_cache.py's MetadataCache (whose state it updates: the topics, the
partition states, the topics awaiting their configs); the watches on the same znodes are the
fallback path. A partition state is taken only when its znode version (the partition epoch) is
newer than the one held, whichever way it came.
"""

from typing import Callable, Iterable

from fauxka.zkstore import paths as zp

Replicas = dict[int, list[int]]  # partition -> broker ids


def partition_state(state) -> zp.PartitionState:
    """A LeaderAndIsr or UpdateMetadata partition state as the cache keeps it (the partition epoch,
    PartitionEpoch or ZkVersion, is the state znode's version)."""
    epoch = getattr(state, "partition_epoch", None)
    if epoch is None:
        epoch = state.zk_version
    return zp.PartitionState(state.leader, state.leader_epoch, state.controller_epoch, list(state.isr), epoch)


class PushedMetadata:
    # the MetadataCache's state this side updates
    _topics: dict[str, zp.TopicAssignment]
    _listed: set[str]
    partition_states: dict[tuple[str, int], zp.PartitionState]
    topic_configs: dict[str, dict[str, str]]
    configs_pending: set[str]
    _announced: dict[str, zp.TopicAssignment]
    _drop_topic: Callable[[str], None]
    _watch_topic: Callable[[str], None]
    _emit: Callable[[tuple], None]

    def apply_pushed(self, topic: str, topic_id, partitions: dict[int, tuple[list[int], zp.PartitionState]],
                     adding: Replicas | None = None, removing: Replicas | None = None, announce: bool = True) -> None:
        """Partitions of `topic` as an UpdateMetadata (`announce`) or LeaderAndIsr names them: replicas
        and state (zk_version = the partition epoch). A topic new here is also watched (the fallback
        path); LeaderAndIsr's adding and removing replicas replace those of the partitions it names. Only
        an announcing request adds partitions to what clients are told of (metadata_cache.py)."""
        known = self._topics.get(topic)
        if known is not None and None not in (topic_id, known.topic_id) and known.topic_id != topic_id:
            self._drop_topic(topic)  # an earlier topic of the same name, deleted while we did not hear
            known = None
        if known is None:
            assignment = zp.TopicAssignment(topic_id, {p: list(r) for p, (r, _) in partitions.items()})
        else:
            assignment = merged_assignment(known, topic_id, partitions, adding, removing)
        if assignment is not known:
            self._topics[topic] = assignment
        announced = self._announce(topic, partitions if announce else ())
        changed = []
        for p, (_, state) in partitions.items():
            held = self.partition_states.get((topic, p))
            if held is None or state.zk_version > held.zk_version:
                self.partition_states[(topic, p)] = state
                changed.append(p)
        if known is None:
            self._listed.add(topic)
            if topic not in self.topic_configs:
                self.configs_pending.add(topic)
            self._watch_topic(topic)
            self._emit(("topic", topic))
            return
        if assignment is not known or announced:
            self._emit(("topic", topic))
        for p in changed:
            self._emit(("partition", topic, p))

    def _announce(self, topic: str, named: Iterable[int] = ()) -> bool:
        """The topic's announced partitions become those held so far plus `named`, as its assignment in
        `_topics` now has them; True when what clients are told of changed."""
        full = self._topics[topic]
        held = self._announced.get(topic)
        served = set(held.partitions if held is not None else ()).union(named)
        if served >= full.partitions.keys():
            announced = full
        elif served:
            announced = zp.TopicAssignment(full.topic_id, {p: r for p, r in full.partitions.items() if p in served},
                                           {p: r for p, r in full.adding.items() if p in served},
                                           {p: r for p, r in full.removing.items() if p in served})
        else:
            return False
        self._announced[topic] = announced
        return held is None or announced.partitions != held.partitions or announced.topic_id != held.topic_id

    def drop_pushed(self, topic: str, partitions: Iterable[int]) -> None:
        """StopReplica with deletion: the topic's partitions are gone (its znodes with them); the
        topic leaves the cache when none is left."""
        assignment = self._topics.get(topic)
        if assignment is None:
            return
        left = set(assignment.partitions) - set(partitions)
        if not left:
            self._listed.discard(topic)
            self._drop_topic(topic)


def merged_assignment(known: zp.TopicAssignment, topic_id, partitions: dict[int, tuple[list[int], zp.PartitionState]],
                      adding: Replicas | None, removing: Replicas | None) -> zp.TopicAssignment:
    """`known` with the pushed partitions' replicas (and, from LeaderAndIsr, their adding and
    removing replicas); `known` itself when nothing changed: a copy only on a real change, since
    the "topic" event it brings makes every replica look again."""
    moved = any(known.partitions.get(p) != list(r) for p, (r, _) in partitions.items())
    reassigning = adding is not None and any(
        known.adding.get(p, []) != adding.get(p, []) or known.removing.get(p, []) != (removing or {}).get(p, [])
        for p in partitions)
    if not (moved or reassigning):
        return known
    merged_adding, merged_removing = dict(known.adding), dict(known.removing)
    for p in partitions if adding is not None else ():
        for merged, given in ((merged_adding, adding), (merged_removing, removing or {})):
            if given.get(p):
                merged[p] = list(given[p])
            else:
                merged.pop(p, None)
    return zp.TopicAssignment(known.topic_id or topic_id,
                              {**known.partitions, **{p: list(r) for p, (r, _) in partitions.items()}},
                              merged_adding, merged_removing)
