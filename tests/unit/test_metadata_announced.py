"""What a broker's metadata cache tells clients of a topic: every partition of it at once.

A LeaderAndIsr names only the partitions this broker replicates; it must never make a topic show
up with fewer partitions than it has (a keyed producer hashes over the count it is told), nor a
partition count shrink. UpdateMetadata, the topic's znode and the controller's own write announce.
The ZooKeeper store is a stand-in that never answers: only the pushed paths are under test."""

import uuid

import pytest

from fauxka.broker.metadata_cache import MetadataCache
from fauxka.zkstore import paths as zp


class _Watch:
    def cancel(self) -> None:
        pass


class _SilentZk:
    def watch_data(self, path, callback):
        return _Watch()

    watch_children = watch_data


class _Log:
    def exception(self, *args, **kwargs):
        raise AssertionError(f"a listener failed: {args} {kwargs}")

    error = exception


TOPIC_ID = uuid.uuid4()


def _state(leader: int, version: int = 0) -> zp.PartitionState:
    return zp.PartitionState(leader=leader, leader_epoch=0, controller_epoch=1, isr=[leader], zk_version=version)


def _named(partitions: dict[int, int], version: int = 0) -> dict:
    """{partition: (replicas, state)} for RF1 partitions led by the given brokers."""
    return {p: ([leader], _state(leader, version)) for p, leader in partitions.items()}


@pytest.fixture
def cache():
    made = MetadataCache(_SilentZk(), _Log())
    events: list[tuple] = []
    made.subscribe(events.append)
    made.events = events
    return made


def test_leader_and_isr_alone_announces_nothing(cache):
    cache.apply_pushed("t", TOPIC_ID, _named({2: 1}), {}, {}, announce=False)
    assert "t" not in cache.topics
    assert cache.partitions_of("t") == {}
    assert cache.topic_by_id(TOPIC_ID) is None
    # the replicas follow it all the same
    assert cache.all_topics["t"].partitions == {2: [1]}
    assert cache.partition_states[("t", 2)].leader == 1


def test_update_metadata_after_leader_and_isr_announces_every_partition(cache):
    cache.apply_pushed("t", TOPIC_ID, _named({2: 1}), {}, {}, announce=False)
    cache.events.clear()
    cache.apply_pushed("t", TOPIC_ID, _named({0: 2, 1: 3, 2: 1}))
    assert sorted(cache.partitions_of("t")) == [0, 1, 2]
    assert cache.topic_by_id(TOPIC_ID) == "t"
    assert ("topic", "t") in cache.events  # waiters on the topic wake


def test_update_metadata_naming_what_leader_and_isr_named_still_announces(cache):
    """RF3: the LeaderAndIsr named every partition, so the UpdateMetadata changes no assignment."""
    replicas = {p: ([1, 2, 3], _state(1 + p % 3)) for p in range(3)}
    cache.apply_pushed("t", TOPIC_ID, replicas, {}, {}, announce=False)
    assert "t" not in cache.topics
    cache.events.clear()
    cache.apply_pushed("t", TOPIC_ID, replicas)
    assert sorted(cache.partitions_of("t")) == [0, 1, 2]
    assert cache.events == [("topic", "t")]


def test_new_partitions_named_by_leader_and_isr_wait_for_update_metadata(cache):
    """CreatePartitions 3 -> 6: this broker leads partition 4; clients keep seeing 3 until the
    UpdateMetadata that names 3, 4 and 5 together."""
    cache.apply_pushed("t", TOPIC_ID, _named({0: 1, 1: 2, 2: 3}))
    cache.apply_pushed("t", TOPIC_ID, _named({4: 1}), {}, {}, announce=False)
    assert sorted(cache.partitions_of("t")) == [0, 1, 2]
    assert sorted(cache.all_topics["t"].partitions) == [0, 1, 2, 4]
    cache.apply_pushed("t", TOPIC_ID, _named({3: 3, 4: 1, 5: 2}))
    assert sorted(cache.partitions_of("t")) == [0, 1, 2, 3, 4, 5]
    assert cache.topics["t"] is cache.all_topics["t"]  # whole again: one object, no copy kept


def test_a_leader_and_isr_moving_replicas_of_announced_partitions_is_served(cache):
    cache.apply_pushed("t", TOPIC_ID, _named({0: 1, 1: 2}))
    cache.apply_pushed("t", TOPIC_ID, {0: ([1, 3], _state(1, 1))}, {0: [3]}, {}, announce=False)
    assert cache.partitions_of("t") == {0: [1, 3], 1: [2]}


def test_the_count_never_shrinks(cache):
    cache.apply_pushed("t", TOPIC_ID, _named({0: 1, 1: 2, 2: 3}))
    cache.apply_pushed("t", TOPIC_ID, _named({1: 2}, version=1))  # an UpdateMetadata naming one partition
    cache.apply_pushed("t", TOPIC_ID, _named({0: 1}, version=1), {}, {}, announce=False)
    assert sorted(cache.partitions_of("t")) == [0, 1, 2]


def test_the_controllers_own_write_announces_the_whole_topic(cache):
    assignment = zp.TopicAssignment(TOPIC_ID, {0: [1], 1: [2], 2: [3]})
    cache.record_written_topic("t", assignment, {}, {p: _state(p + 1) for p in range(3)})
    assert cache.topics["t"] is assignment


def test_a_dropped_topic_is_not_announced_any_more(cache):
    cache.apply_pushed("t", TOPIC_ID, _named({0: 1, 1: 2}))
    cache.drop_pushed("t", [0, 1])
    assert "t" not in cache.topics and "t" not in cache.all_topics
    cache.apply_pushed("t", uuid.uuid4(), _named({1: 2}), {}, {}, announce=False)
    assert "t" not in cache.topics  # created again: not announced before its UpdateMetadata
