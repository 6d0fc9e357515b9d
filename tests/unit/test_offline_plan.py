"""The controller's offline-partition pass over plain cache data (no ZooKeeper)."""

from types import SimpleNamespace

import structlog

from fauxka.controller import leader_election as le
from fauxka.controller.partition_leadership import PartitionLeadership
from fauxka.zkstore import paths as zp


def leadership(brokers, topics, states, deleting=(), topic_configs=None):
    cache = SimpleNamespace(brokers={b: object() for b in brokers}, broker_epochs={b: 100 + b for b in brokers},
                            deleting=set(deleting),
                            all_topics={t: zp.TopicAssignment(None, parts) for t, parts in topics.items()},
                            partition_states=states, topic_configs=topic_configs or {}, broker_configs={})
    election = SimpleNamespace(epoch=4)
    return PartitionLeadership(None, cache, None, election, {"unclean.leader.election.enable": False},
                               structlog.get_logger())


def plan(pl):
    return pl._offline_plan(pl._partitions())


def test_a_dead_leader_is_replaced_and_dead_followers_leave_the_isr():
    pl = leadership({2, 3}, {"t": {0: [1, 2, 3], 1: [2, 1, 3]}},
                    {("t", 0): zp.PartitionState(1, 3, 1, [1, 2, 3], 5), ("t", 1): zp.PartitionState(2, 0, 1, [2, 1], 1)})
    out = plan(pl)
    assert out[("t", 0)] == zp.PartitionState(2, 4, 4, [2, 3])
    assert out[("t", 0)].zk_version == 5  # written conditionally on the version it was computed from
    assert out[("t", 1)] == zp.PartitionState(2, 1, 4, [2])


def test_no_leader_when_no_in_sync_replica_lives_and_no_rewrite_afterwards():
    pl = leadership({2}, {"t": {0: [1, 2]}}, {("t", 0): zp.PartitionState(1, 0, 1, [1], 0)})
    assert plan(pl)[("t", 0)] == zp.PartitionState(le.NO_LEADER, 1, 4, [1])
    pl = leadership({2}, {"t": {0: [1, 2]}}, {("t", 0): zp.PartitionState(le.NO_LEADER, 1, 4, [1], 1)})
    assert plan(pl) == {}  # nothing changes until broker 1 returns


def test_unclean_topic_config_elects_an_out_of_sync_replica():
    pl = leadership({2}, {"t": {0: [1, 2]}}, {("t", 0): zp.PartitionState(1, 0, 1, [1], 0)},
                    topic_configs={"t": {"unclean.leader.election.enable": "true"}})
    assert plan(pl)[("t", 0)] == zp.PartitionState(2, 1, 4, [2])


def test_returning_broker_leads_its_leaderless_partitions():
    pl = leadership({1, 2}, {"t": {0: [2, 1]}}, {("t", 0): zp.PartitionState(le.NO_LEADER, 1, 4, [1], 1)})
    assert plan(pl)[("t", 0)] == zp.PartitionState(1, 2, 4, [1])


def test_shutting_down_leaders_and_deleted_topics_are_left_alone():
    states = {("t", 0): zp.PartitionState(1, 0, 1, [1], 0), ("d", 0): zp.PartitionState(3, 0, 1, [3], 0)}
    pl = leadership({1, 2}, {"t": {0: [1]}, "d": {0: [3]}}, states, deleting={"d"})
    pl._shutting_down[1] = 101  # its controlled shutdown, at its current broker epoch
    assert plan(pl) == {}


def test_a_broker_that_registered_again_is_no_longer_shutting_down():
    pl = leadership({1, 2}, {"t": {0: [1, 2]}}, {("t", 0): zp.PartitionState(le.NO_LEADER, 1, 1, [1], 0)})
    pl._shutting_down[1] = 101
    assert pl.live == {2} and plan(pl) == {}
    pl._cache.broker_epochs[1] = 555  # bounced: a new registration
    assert pl.live == {1, 2} and plan(pl)[("t", 0)].leader == 1
