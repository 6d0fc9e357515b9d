"""Kafka's election rules (kafka.controller.Election, ReplicaStateMachine, AlterPartition checks)."""

from fauxka.controller import leader_election as le
from fauxka.zkstore.paths import PartitionState


def state(leader, isr, epoch=5, version=7):
    return PartitionState(leader, epoch, 1, list(isr), version)


def part(replicas, st, topic="t", p=0):
    return le.Partition(topic, p, list(replicas), st)


def test_offline_election_takes_the_first_live_in_sync_replica_in_assignment_order():
    assert le.offline_leader([1, 2, 3], isr=[3, 2], live={2, 3}, unclean=False) == (2, [3, 2])
    assert le.offline_leader([1, 2, 3], isr=[1, 3], live={2, 3}, unclean=False) == (3, [3])
    assert le.offline_leader([1, 2, 3], isr=[1], live={2, 3}, unclean=False) is None


def test_unclean_election_takes_any_live_replica_and_resets_the_isr():
    assert le.offline_leader([1, 2, 3], isr=[1], live={3, 2}, unclean=True) == (2, [2])
    assert le.offline_leader([1, 2], isr=[1], live={3}, unclean=True) is None


def test_every_controller_election_bumps_the_leader_epoch_and_keeps_the_partition_epoch():
    new = le.elect_offline(part([1, 2], state(1, [1, 2])), live={2}, unclean=False, controller_epoch=9)
    assert (new.leader, new.leader_epoch, new.isr, new.controller_epoch, new.zk_version) == (2, 6, [2], 9, 7)


def test_preferred_election_needs_the_preferred_replica_live_and_in_sync():
    assert le.preferred_leader([1, 2], isr=[2, 1], live={1, 2}) == 1
    assert le.preferred_leader([1, 2], isr=[2], live={1, 2}) is None
    assert le.preferred_leader([1, 2], isr=[1, 2], live={2}) is None
    new = le.elect_preferred(part([1, 2], state(2, [2, 1])), {1, 2}, 3)
    assert (new.leader, new.leader_epoch, new.isr) == (1, 6, [2, 1])


def test_controlled_shutdown_moves_leadership_away_and_drops_the_broker_from_the_isr():
    assert le.controlled_shutdown_leader([1, 2, 3], [1, 2, 3], live={2, 3}, shutting_down={1}) == (2, [2, 3])
    assert le.controlled_shutdown_leader([1, 2], [1], live={2}, shutting_down={1}) is None


def test_a_lost_replica_leaves_the_isr_but_never_empties_it():
    assert le.without_replica(state(1, [1, 2]), 2, 4).isr == [1]
    lone = le.without_replica(state(1, [1]), 1, 4)
    assert (lone.leader, lone.isr, lone.leader_epoch) == (le.NO_LEADER, [1], 6)
    assert le.without_replica(state(1, [1]), 3, 4) is None


def test_rebalance_picks_brokers_over_the_imbalance_percentage():
    ps = [part([1, 2], state(2, [1, 2]), p=0), part([1, 2], state(1, [1, 2]), p=1),
          part([2, 1], state(2, [1, 2]), p=2)]
    assert [p.partition for p in le.rebalance_candidates(ps, {1, 2}, 10)] == [0]  # broker 1: 50% > 10%
    assert le.rebalance_candidates(ps, {1, 2}, 50) == []  # not above 50%
    assert le.rebalance_candidates(ps, {2}, 10) == []  # the preferred broker is not live
    assert le.rebalance_candidates(ps, {1, 2}, 10, deleting={"t"}) == []


def change(**kw):
    values = dict(broker_id=1, leader_epoch=5, new_isr=[1], partition_epoch=7)
    values.update(kw)
    return le.IsrChange(**values)


def test_alter_partition_checks_in_kafkas_order():
    current = state(1, [1, 2])
    assert le.check_alter_partition(None, change(), {1, 2}, 2)[0] == "unknown_topic_or_partition"
    assert le.check_alter_partition(current, change(partition_epoch=8), {1, 2}, 2)[0] == "not_controller"
    assert le.check_alter_partition(current, change(leader_epoch=6), {1, 2}, 2)[0] == "not_controller"
    assert le.check_alter_partition(current, change(leader_epoch=4), {1, 2}, 2)[0] == "fenced_leader_epoch"
    assert le.check_alter_partition(current, change(broker_id=2), {1, 2}, 2)[0] == "fenced_leader_epoch"
    # an idempotent retry with a stale partition epoch gets the current state
    assert le.check_alter_partition(current, change(new_isr=[1, 2], partition_epoch=6), {1, 2}, 2) == ("same", current)
    assert le.check_alter_partition(current, change(partition_epoch=6), {1, 2}, 2)[0] == "invalid_update_version"
    assert le.check_alter_partition(current, change(new_isr=[1, 3]), {1, 2}, 2)[0] == "ineligible_replica"
    assert le.check_alter_partition(current, change(new_isr=[1, 3]), {1, 2}, 1)[0] == "operation_not_attempted"
    verdict, new = le.check_alter_partition(current, change(), {1, 2}, 2)
    assert verdict == "write" and (new.leader, new.leader_epoch, new.isr, new.zk_version) == (1, 5, [1], 7)


def test_take_offline_moves_the_leadership_and_leaves_the_isr():
    """onReplicasBecomeOffline (a replica on a failed log dir): offline election without it, out of the ISR."""
    p = le.Partition("t", 0, [1, 2, 3], PartitionState(1, 4, 2, [1, 2, 3], 9))
    led = le.take_offline(p, 1, {1, 2, 3}, 5)
    assert (led.leader, led.leader_epoch, led.controller_epoch, led.isr) == (2, 5, 5, [2, 3])
    followed = le.take_offline(p, 3, {1, 2, 3}, 5)
    assert (followed.leader, followed.isr) == (1, [1, 2])
    alone = le.take_offline(le.Partition("t", 0, [1, 2], PartitionState(1, 4, 2, [1], 9)), 1, {1, 2}, 5)
    assert (alone.leader, alone.isr) == (le.NO_LEADER, [1])  # no other in-sync replica: the last member stays
    assert le.take_offline(le.Partition("t", 0, [1, 2], PartitionState(1, 4, 2, [1], 9)), 2, {1, 2}, 5) is None
