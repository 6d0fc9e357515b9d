"""The pure pieces of controller.partitions: request triage, response order, the znodes written."""

import json
import uuid

from fauxka.controller.assignment import BrokerMeta
from fauxka.controller.partitions import increase_ops, kafka_map_order, mixed_racks, triage
from fauxka.model.topic_names import java_string_hash, scala_set_order
from fauxka.zkstore import paths as zp


def test_triage_splits_duplicates_queued_and_valid_in_request_order():
    names = ["a", "b", "a", "c", "d", "b", "a"]
    dupes, queued, valid = triage(names, deleting={"c", "x"})
    assert dupes == ["a", "b"]  # each duplicated name once, by first occurrence
    assert queued == ["c"]
    assert valid == ["d"]


def test_a_duplicated_topic_queued_for_deletion_counts_as_a_duplicate():
    assert triage(["a", "a"], deleting={"a"}) == (["a"], [], [])


def test_response_order_is_insertion_order_up_to_four_names():
    assert kafka_map_order(["z", "y", "z", "x"]) == ["z", "y", "x"]
    assert kafka_map_order(["d", "c", "b", "a"]) == ["d", "c", "b", "a"]


def test_response_order_from_five_names_is_scala_hash_order():
    names = [f"topic-{i}" for i in range(7)]
    order = kafka_map_order(names)
    assert sorted(order) == sorted(names)
    assert order == scala_set_order(names, java_string_hash)
    assert order == kafka_map_order(list(reversed(names)))  # independent of insertion order


def test_mixed_racks():
    assert not mixed_racks([BrokerMeta(1), BrokerMeta(2)])
    assert not mixed_racks([BrokerMeta(1, "a"), BrokerMeta(2, "b")])
    assert mixed_racks([BrokerMeta(1, "a"), BrokerMeta(2)])
    assert not mixed_racks([])


def test_increase_ops_set_the_whole_assignment_with_the_same_id_and_create_the_new_partitions():
    topic_id = uuid.uuid4()
    existing = {0: [1, 2], 1: [2, 3]}
    new = {3: [2, 1], 2: [3, 1]}
    ops = increase_ops("t", topic_id, existing, new, live_brokers={1, 2}, controller_epoch=7)
    assert [(op.kind, op.path) for op in ops] == [
        ("set", "/brokers/topics/t"),
        ("create", "/brokers/topics/t/partitions/2"),
        ("create", "/brokers/topics/t/partitions/2/state"),
        ("create", "/brokers/topics/t/partitions/3"),
        ("create", "/brokers/topics/t/partitions/3/state"),
    ]
    assert ops[0].version == -1  # as Kafka: ZkVersion.MatchAnyVersion
    written = zp.decode_topic(ops[0].data)
    assert written.topic_id == topic_id
    assert written.partitions == {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [2, 1]}
    assert json.loads(ops[0].data)["version"] == 3
    # leader: the first live replica; isr: the live replicas
    assert zp.decode_partition_state(ops[2].data) == zp.PartitionState(1, 0, 7, [1])
    assert zp.decode_partition_state(ops[4].data) == zp.PartitionState(2, 0, 7, [2, 1])


def test_increase_ops_keep_a_topic_without_id_without_id():
    ops = increase_ops("t", None, {0: [1]}, {1: [1]}, {1}, 1)
    assert "topic_id" not in json.loads(ops[0].data)
