"""A new topic shows up whole: a keyed producer started right after create_topics() puts every key
on the partition its hash names (librdkafka hashes over the partition count it is told).

A broker that served a new topic with only the partitions its LeaderAndIsr named (RF1: the one it
leads) sent keys to the wrong partition: 9 of 100 topics, 198 of 3,000 records, before the fix.
Each topic is created through a different broker and produced to by a fresh producer whose only
bootstrap is one broker, round robin, so every broker answers the first Metadata of some topics.
"""

import zlib

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from tests.admin_helpers import send, unique

TOPICS = 60
KEYS = [f"key-{i}".encode() for i in range(30)]


def _produce_keys(address: str, topic: str) -> list[tuple[bytes, int]]:
    """(key, partition) of every record, as the broker acknowledged it."""
    placed: list[tuple[bytes, int]] = []
    errors: list = []

    def delivered(err, msg):
        if err is not None:
            errors.append(err)
        else:
            placed.append((msg.key(), msg.partition()))

    producer = Producer({"bootstrap.servers": address, "acks": "all", "partitioner": "consistent",
                         "linger.ms": 0, "message.timeout.ms": 20000})
    for key in KEYS:
        producer.produce(topic, key=key, value=b"v", on_delivery=delivered)
    assert producer.flush(30) == 0
    assert errors == []
    return placed


def _misplaced(placed: list[tuple[bytes, int]], partitions: int) -> list[tuple[bytes, int]]:
    # librdkafka's "consistent" partitioner: CRC32 of the key modulo the partition count
    return [(key, p) for key, p in placed if p != zlib.crc32(key) % partitions]


@pytest.mark.parametrize("replication", [1, 3])
def test_keyed_records_right_after_create_topics_land_on_their_partitions(cluster, replication):
    addresses = [cluster.address_of(b) for b in sorted(cluster.brokers)]
    admins = [AdminClient({"bootstrap.servers": a}) for a in addresses]
    wrong: dict[str, list] = {}
    for i in range(TOPICS):
        topic = unique(f"whole-rf{replication}")
        futures = admins[i % len(admins)].create_topics([NewTopic(topic, 3, replication)], operation_timeout=10)
        futures[topic].result(30)
        misplaced = _misplaced(_produce_keys(addresses[(i + 1) % len(addresses)], topic), 3)
        if misplaced:
            wrong[topic] = misplaced
    assert wrong == {}


def test_keyed_records_right_after_create_partitions_land_on_their_partitions(cluster):
    addresses = [cluster.address_of(b) for b in sorted(cluster.brokers)]
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    wrong: dict[str, list] = {}
    for i in range(TOPICS // 3):
        topic = unique("grown")
        admin.create_topics([NewTopic(topic, 2, 1)], operation_timeout=10)[topic].result(30)
        admin.create_partitions([NewPartitions(topic, 6)], operation_timeout=10)[topic].result(30)
        misplaced = _misplaced(_produce_keys(addresses[i % len(addresses)], topic), 6)
        if misplaced:
            wrong[topic] = misplaced
    assert wrong == {}


def _partitions_on(address: str, topic: str) -> dict[int, int]:
    """partition -> leader in one broker's Metadata answer (no auto-creation)."""
    response = send(address, 3, 12, {"topics": [{"name": topic, "topic_id": None}],
                                     "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": False})
    [t] = response.topics
    return {p.partition_index: p.leader_id for p in t.partitions}


@pytest.mark.parametrize("operation_timeout", [0, 10])
def test_once_create_topics_answers_every_broker_serves_the_topic(cluster, operation_timeout):
    """librdkafka's create_topics() sends timeout 0 by default: Kafka answers once the controller
    has written the topic. fauxka answers once every broker has been told, so a test's next
    request, to whichever broker, finds the whole topic with its leaders."""
    addresses = [cluster.address_of(b) for b in sorted(cluster.brokers)]
    admin = AdminClient({"bootstrap.servers": cluster.controller_address()})
    for _ in range(20):  # without the wait, some brokers had not heard of one in 20 (1 run of 2 failed)
        topic = unique("served")
        admin.create_topics([NewTopic(topic, 3, 3)], operation_timeout=operation_timeout)[topic].result(30)
        views = {a: _partitions_on(a, topic) for a in addresses}
        assert all(sorted(v) == [0, 1, 2] and all(leader >= 0 for leader in v.values())
                   for v in views.values()), views
