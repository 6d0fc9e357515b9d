"""KIP-392's rules: which replica a partition's leader sends a consumer to (Kafka's
RackAwareReplicaSelector inside ReplicaManager.findPreferredReadReplica), and a new leader's
OFFSET_NOT_AVAILABLE window (Partition.fetchOffsetForTimestamp). Pure logic over Partition and a
stand-in log."""

from fauxka.broker.replication.partition import Partition
from fauxka.broker.replication.replica_selector import (NO_PREFERENCE, ReplicaView, preferred_read_replica,
                                                        select_rack_aware)
from fauxka.model.broker_keys import BROKER_CONFIGS, RACK_AWARE_REPLICA_SELECTOR

from .test_replication_partition import EpochLog

RACKS = {1: "a", 2: "b", 3: "c"}


def leading(isr=(1, 2, 3), end=10, replicas=(1, 2, 3)) -> Partition:
    p = Partition("t", 0, EpochLog(end), broker_id=1)
    p.become_leader(5, list(isr), list(replicas), 7, now_ms=1000.0)
    return p


def test_a_consumer_in_a_followers_rack_is_sent_to_that_follower():
    p = leading()
    p.update_follower(2, 10, now_ms=2000.0)
    p.update_follower(3, 10, now_ms=2000.0)
    assert preferred_read_replica(p, "b", 4, 3000.0, RACKS) == 2
    assert preferred_read_replica(p, "c", 4, 3000.0, RACKS) == 3


def test_the_leader_serves_a_consumer_of_its_rack_of_no_rack_or_of_an_unknown_one():
    p = leading()
    p.update_follower(2, 10, now_ms=2000.0)
    racks = {1: "a", 2: "a", 3: "c"}  # the leader shares rack a with follower 2: the leader wins
    assert preferred_read_replica(p, "a", 4, 3000.0, racks) == NO_PREFERENCE
    assert preferred_read_replica(p, "", 4, 3000.0, RACKS) == NO_PREFERENCE
    assert preferred_read_replica(p, "z", 4, 3000.0, RACKS) == NO_PREFERENCE


def test_a_follower_out_of_the_isr_dead_or_without_the_offset_is_not_chosen():
    p = leading(isr=(1, 3))
    p.update_follower(2, 10, now_ms=2000.0)
    assert preferred_read_replica(p, "b", 4, 3000.0, RACKS) == NO_PREFERENCE  # 2 is out of the ISR
    p = leading()
    p.update_follower(2, 3, now_ms=2000.0)  # it has offsets 0..2 only
    assert preferred_read_replica(p, "b", 4, 3000.0, RACKS) == NO_PREFERENCE
    assert preferred_read_replica(p, "b", 3, 3000.0, RACKS) == 2  # the fetch offset may be its end
    p.update_follower(2, 10, now_ms=2000.0, log_start_offset=6)  # DeleteRecords moved its start
    assert preferred_read_replica(p, "b", 4, 3000.0, RACKS) == NO_PREFERENCE
    p.update_follower(2, 10, now_ms=2000.0)
    assert preferred_read_replica(p, "b", 4, 3000.0, {1: "a", 3: "c"}) == NO_PREFERENCE  # 2 not live there
    assert preferred_read_replica(p, "b", 4, 3000.0, RACKS) == 2


def test_among_followers_of_the_rack_the_most_caught_up_one_is_chosen():
    leader = ReplicaView(1, "a", 100, 0)
    behind, ahead = ReplicaView(2, "b", 90, 0), ReplicaView(3, "b", 95, 5000)
    assert select_rack_aware("b", leader, [behind, ahead]) == ahead  # log end offset first
    stale, fresh = ReplicaView(2, "b", 95, 9000), ReplicaView(3, "b", 95, 10)
    assert select_rack_aware("b", leader, [stale, fresh]) == fresh  # then caught up most recently
    low, high = ReplicaView(2, "b", 95, 10), ReplicaView(3, "b", 95, 10)
    assert select_rack_aware("b", leader, [high, low]) == high  # then the highest broker id


def test_only_kafkas_own_selector_is_accepted():
    check = BROKER_CONFIGS["replica.selector.class"].check
    assert check(None) is None and check(RACK_AWARE_REPLICA_SELECTOR) is None
    assert "cannot be found" in check("com.example.MySelector")


def test_a_new_leaders_offsets_are_not_available_until_its_high_watermark_reaches_its_epoch_start():
    p = leading(end=10)
    assert p.epoch_start_offset == 10 and p.log.high_watermark == 0
    assert p.offsets_not_available()
    p.log.high_watermark = 10
    assert not p.offsets_not_available()
    p.become_follower(2, 6, [1, 2, 3], [1, 2, 3], 8)
    p.log.high_watermark = 0
    assert p.epoch_start_offset is None and not p.offsets_not_available()
