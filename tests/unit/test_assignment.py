"""Replica assignment (fauxka/controller/assignment.py) against Kafka's AdminUtils / AdminZkClient."""

import random
from collections import Counter

import pytest

from fauxka.controller.assignment import (
    AssignmentError,
    BrokerMeta,
    add_partitions,
    assign_replicas,
    metadata_cache_broker_order,
    rack_alternated_broker_list,
    validate_create_assignment,
)


def brokers(*ids, racks=None):
    return [BrokerMeta(i, racks[i] if racks else None) for i in ids]


def error(fn, *args, **kwargs):
    with pytest.raises(AssignmentError) as info:
        fn(*args, **kwargs)
    return info.value.error_code, info.value.message


class Draws:
    """A Random whose randrange answers from a script, to see which draw is used for what."""
    def __init__(self, *values):
        self.values = list(values)

    def randrange(self, n):
        return self.values.pop(0) % n


# --- assign_replicas --------------------------------------------------------------------------

def test_fixed_start_matches_kafka_admin_rack_aware_test():
    # AdminRackAwareTest.testReplicaAssignment (core/src/test, 3.4.0): 5 brokers, 10 partitions, rf 3, start 0.
    expected = {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
                5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}
    assert assign_replicas(brokers(0, 1, 2, 3, 4), 10, 3, fixed_start_index=0) == expected


def test_rack_aware_matches_kafka_admin_rack_aware_test():
    # AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers (3.4.0).
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_broker_list(racks) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_broker_list({k: v for k, v in racks.items() if k != 5}) == [0, 3, 1, 4, 2]
    got = assign_replicas(brokers(*racks, racks=racks), 7, 3, fixed_start_index=0, start_partition_id=0)
    assert got == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0],
                   5: [2, 0, 3], 6: [0, 4, 2]}
    # Rack-aware placement ignores the order the brokers come in.
    shuffled = brokers(5, 2, 4, 0, 3, 1, racks=racks)
    assert assign_replicas(shuffled, 7, 3, fixed_start_index=0) == got


def test_random_start_index_then_shift_are_drawn_in_kafka_order():
    five = brokers(0, 1, 2, 3, 4)
    assert assign_replicas(five, 1, 3, rng=Draws(2, 0)) == {0: [2, 3, 4]}
    assert assign_replicas(five, 1, 3, rng=Draws(2, 1)) == {0: [2, 4, 0]}
    assert assign_replicas(five, 2, 2, rng=Draws(4, 3)) == {0: [4, 3], 1: [0, 4]}


def test_rack_unaware_walks_brokers_in_the_given_order():
    assert assign_replicas(brokers(3, 1, 2), 1, 3, fixed_start_index=0) == {0: [3, 1, 2]}


@pytest.mark.parametrize("n", range(1, 8))
def test_rack_unaware_distribution(n):
    rng = random.Random(n)
    for rf in range(1, n + 1):
        for k in (1, 2, 3):
            got = assign_replicas(brokers(*range(10, 10 + n)), n * k, rf, rng=rng)
            assert sorted(got) == list(range(n * k))
            assert all(len(set(r)) == rf for r in got.values())
            leaders = Counter(r[0] for r in got.values())
            assert set(leaders.values()) == {k}
            # Whole rounds give every broker exactly k*rf replicas (so within 1 trivially).
            assert set(Counter(b for r in got.values() for b in r).values()) == {k * rf}
            # Any partition count: leaders stay within 1 of each other.
            partial = Counter(r[0] for r in assign_replicas(brokers(*range(n)), n * k + 1, rf, rng=rng).values())
            assert max(partial.values()) - min(partial.values(), default=0) <= 1


RACK_LAYOUTS = [
    {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"},
    {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"},
    {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"},
    {0: "rack1", 1: "rack2", 4: "rack3"},
    {i: "only" for i in range(6)},
]


@pytest.mark.parametrize("racks", RACK_LAYOUTS)
def test_rack_aware_distribution(racks):
    num_racks = len(set(racks.values()))
    n = len(racks)
    for rf in range(1, n + 1):
        for seed in range(5):
            got = assign_replicas(brokers(*racks, racks=racks), n * 2, rf, rng=random.Random(seed))
            for replicas in got.values():
                assert len(set(replicas)) == rf
                assert len({racks[b] for b in replicas}) == min(rf, num_racks)
            assert set(Counter(r[0] for r in got.values()).values()) == {2}


def test_start_partition_id_continues_numbering():
    got = assign_replicas(brokers(0, 1, 2), 2, 2, fixed_start_index=0, start_partition_id=3)
    assert sorted(got) == [3, 4]


def test_assign_replicas_errors():
    three = brokers(1, 2, 3)
    assert error(assign_replicas, three, 0, 1) == (37, "Number of partitions must be larger than 0.")
    assert error(assign_replicas, three, -1, 0) == (37, "Number of partitions must be larger than 0.")
    assert error(assign_replicas, three, 3, 0) == (38, "Replication factor must be larger than 0.")
    assert error(assign_replicas, three, 3, 4) == (38, "Replication factor: 4 larger than available brokers: 3.")
    assert error(assign_replicas, [], 1, 1) == (38, "Replication factor: 1 larger than available brokers: 0.")
    mixed = [BrokerMeta(1, "r1"), BrokerMeta(2), BrokerMeta(3, "r2")]
    assert error(assign_replicas, mixed, 3, 2) == (
        -1, "Not all brokers have rack information for replica rack aware assignment.")


def test_unknown_server_error_carries_no_client_message():
    with pytest.raises(AssignmentError) as info:
        assign_replicas([BrokerMeta(1, "r"), BrokerMeta(2)], 1, 1)
    assert info.value.client_message is None
    with pytest.raises(AssignmentError) as info:
        assign_replicas(brokers(1), 1, 2)
    assert info.value.client_message == info.value.message


def test_metadata_cache_broker_order():
    # Scala LongMap (mask 7 for up to 8 brokers); broker 0 is stored apart and comes first.
    assert metadata_cache_broker_order([1, 2, 3]) == [2, 3, 1]
    assert metadata_cache_broker_order([0, 1, 2]) == [0, 2, 1]
    assert metadata_cache_broker_order([1, 2, 3, 4, 5]) == [5, 1, 4, 2, 3]
    assert metadata_cache_broker_order([1, 2, 3], previous_count=16) == [1, 2, 3]
    assert sorted(metadata_cache_broker_order(range(1, 40))) == list(range(1, 40))


# --- validate_create_assignment ---------------------------------------------------------------

def test_create_assignment_checks_in_kafka_order():
    # AdminZkClientTest.testManualReplicaAssignment and AddPartitionsTest.testMissingPartitionsInCreateTopics.
    validate_create_assignment({0: [0, 1, 2], 1: [1, 2, 3]})
    assert error(validate_create_assignment, {0: [0, 0]}) == (
        39, "Duplicate replica assignment found: HashMap(0 -> ArrayBuffer(0, 0))")
    assert error(validate_create_assignment, {0: [0, 1], 1: [0]}) == (
        39, "All partitions should have the same number of replicas")
    # The replica-count check comes first even when a duplicate is present too.
    assert error(validate_create_assignment, {0: [1, 1], 1: [2]})[1] == (
        "All partitions should have the same number of replicas")
    consecutive = (39, "partitions should be a consecutive 0-based integer sequence")
    for bad in ({1: [1, 2], 2: [1, 2]}, {0: [1, 2], 3: [1, 2]}, {-1: [1, 2], 1: [1, 2], 2: [1, 2], 4: [1, 2]},
                {1: [0, 1], 2: [1, 0]}, {2: [0, 1], 3: [1, 0]}):
        assert error(validate_create_assignment, bad) == consecutive
    # Duplicates are reported before gaps.
    assert error(validate_create_assignment, {0: [1, 2], 5: [3, 3]})[1].startswith("Duplicate replica")


def test_create_assignment_kafka_quirks():
    # Only sums are compared: a negative id can make up for a gap.
    validate_create_assignment({-1: [1], 0: [2], 3: [3]})
    assert error(validate_create_assignment, {})[1] == "All partitions should have the same number of replicas"


def test_duplicate_message_prints_scala_hash_map_order():
    # Bucket = hash ^ (hash >>> 16) masked to the table, then by that hash (signed) within a bucket.
    got = error(validate_create_assignment, {17: [1, 2], 1: [2, 3], 16: [3, 4], 0: [4, 4], -1: [5, 6]})[1]
    assert got == ("Duplicate replica assignment found: HashMap(-1 -> ArrayBuffer(5, 6), 0 -> ArrayBuffer(4, 4), "
                   "16 -> ArrayBuffer(3, 4), 1 -> ArrayBuffer(2, 3), 17 -> ArrayBuffer(1, 2))")
    many = {p: [1, 1] for p in range(13)}  # 13 entries: the table has grown to 32 slots
    assert error(validate_create_assignment, many)[1].endswith("11 -> ArrayBuffer(1, 1), 12 -> ArrayBuffer(1, 1))")


# --- add_partitions ---------------------------------------------------------------------------

FOUR = brokers(0, 1, 2, 3)


def test_add_partitions_continues_layout_like_kafka_add_partitions_test():
    # AddPartitionsTest.testReplicaPlacementAllServers / PartialServers (3.4.0, zk).
    got = add_partitions(FOUR, {0: [2, 3, 0, 1]}, 7, None)
    assert [got[p][0] for p in range(1, 7)] == [3, 0, 1, 2, 3, 0]
    assert all(set(r) == {0, 1, 2, 3} for r in got.values())
    assert add_partitions(FOUR, {0: [1, 2]}, 3, None) == {1: [2, 0], 2: [3, 1]}
    # Brokers are sorted by id first, and rng plays no part.
    assert add_partitions(brokers(3, 1, 0, 2), {0: [1, 2]}, 3, None, rng=Draws()) == {1: [2, 0], 2: [3, 1]}


def test_add_partitions_start_index_is_first_broker_at_or_above_leader():
    # Partition 0's leader 5 is gone: the start is the first broker with id >= 5, else 0.
    assert add_partitions(brokers(1, 4, 7), {0: [5]}, 2, None) == {1: [1]}
    assert add_partitions(brokers(1, 4), {0: [9]}, 2, None) == {1: [4]}


def test_add_partitions_manual():
    assert add_partitions(FOUR, {0: [0, 1]}, 3, [[2, 3], [3, 0]]) == {1: [2, 3], 2: [3, 0]}


def test_add_partitions_errors():
    existing = {0: [0, 1], 1: [1, 2]}
    assert error(add_partitions, FOUR, existing, 1, None) == (
        37, "Topic currently has 2 partitions, which is higher than the requested 1.")
    assert error(add_partitions, FOUR, existing, 2, [[0, 1]]) == (37, "Topic already has 2 partitions.")
    assert error(add_partitions, FOUR, existing, 4, [[9, 0], [8, 9]]) == (
        39, "Unknown broker(s) in replica assignment: 9, 8.")
    # AddPartitionsTest.testMissingPartitionsInCreatePartitions
    assert error(add_partitions, FOUR, {0: [0, 1]}, 3, [[0, 1, 2]]) == (
        39, "Increasing the number of partitions by 2 but 1 assignments provided.")
    assert error(add_partitions, FOUR, existing, 3, []) == (
        39, "Increasing the number of partitions by 1 but 0 assignments provided.")
    assert error(add_partitions, FOUR, existing, 4, [[0, 1], [2, 2]]) == (
        39, "Duplicate brokers not allowed in replica assignment: 2, 2 for partition id 3.")
    assert error(add_partitions, FOUR, existing, 4, [[0, 1], []]) == (
        39, "Cannot have replication factor of 0 for partition id 3.")
    # AddPartitionsTest.testWrongReplicaCount
    assert error(add_partitions, FOUR, {0: [0, 1]}, 2, [[0, 1, 2]]) == (
        39, "Inconsistent replication factor between partitions, partition 0 has 2 while partitions [1] "
            "have replication factors [3], respectively.")
    assert error(add_partitions, FOUR, existing, 5, [[0], [0, 1], [0, 1, 2]]) == (
        39, "Inconsistent replication factor between partitions, partition 0 has 2 while partitions [2, 4] "
            "have replication factors [1, 3], respectively.")
    assert error(add_partitions, brokers(0), existing, 3, None) == (
        38, "Replication factor: 2 larger than available brokers: 1.")


def test_add_partitions_check_order():
    existing = {0: [0, 1]}
    # Unknown brokers before the number of assignments; duplicates before the replication factor.
    assert error(add_partitions, FOUR, existing, 4, [[7, 0]])[1].startswith("Unknown broker(s)")
    assert error(add_partitions, FOUR, existing, 2, [[1, 1, 2]])[1].startswith("Duplicate brokers")
    # The count checks come before anything about the manual assignment.
    assert error(add_partitions, FOUR, existing, 1, [[9]])[0] == 37


def test_add_partitions_scala_collection_orders():
    # More than 4 distinct brokers make a HashSet: Set(1, 2, 3, 4, 5) iterates 5, 1, 2, 3, 4.
    assert error(add_partitions, brokers(0, 6), {0: [0]}, 2, [[1, 2, 3, 4, 5]])[1] == (
        "Unknown broker(s) in replica assignment: 5, 1, 2, 3, 4.")
    # More than 4 new partitions make a HashMap: the first bad partition in its order is named.
    new = [[0, 1]] * 10
    new[0], new[4] = [1, 1], [2, 2]  # partitions 1 and 5; Scala's HashMap visits 5 first
    assert error(add_partitions, FOUR, {0: [0, 1]}, 11, new)[1].endswith("2, 2 for partition id 5.")


def test_add_partitions_unknown_server_errors():
    assert error(add_partitions, [BrokerMeta(0, "r"), BrokerMeta(1)], {0: [0]}, 2, None) == (
        -1, "Not all brokers have rack information. Add --disable-rack-aware in command line to make "
            "replica assignment without rack information.")
    code, message = error(add_partitions, FOUR, {1: [0, 1]}, 2, [[0, 1, 2]], topic="new-topic5")
    # AddPartitionsTest.testMissingPartitionsInCreatePartitions (the raw AdminZkClient part).
    assert code == -1
    assert message.startswith("Unexpected existing replica assignment for topic 'new-topic5', partition id 0 is missing")
