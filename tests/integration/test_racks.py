"""Brokers with `broker.rack` (`fauxka up --broker-override ID:broker.rack=...`): clients see each
broker's rack, and CreateTopics / CreatePartitions place replicas rack-aware as Kafka's
AdminUtils.assignReplicasToBrokers does (its rules: tests/unit/test_assignment.py): every partition
on as many racks as it can be, leaders spread evenly over the brokers."""

import subprocess
import sys
from collections import Counter

import pytest

from fauxka.ports import free_ports
from tests.admin_helpers import unique

RACKS = {1: "rack-a", 2: "rack-a", 3: "rack-b", 4: "rack-b"}


@pytest.fixture(scope="module")
def racked(tmp_path_factory):
    zk_port, base = free_ports(), free_ports(len(RACKS))
    data_dir = tmp_path_factory.mktemp("racks") / "cluster"
    command = [sys.executable, "-m", "fauxka", "up", "--brokers", str(len(RACKS)), "--data-dir", str(data_dir),
               "--zookeeper-port", str(zk_port), "--base-port", str(base), "--metrics-base-port", "0", "--detach",
               "--timeout", "90"]
    for broker, rack in RACKS.items():
        command += ["--broker-override", f"{broker}:broker.rack={rack}"]
    up = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert up.returncode == 0, up.stderr
    try:
        yield ",".join(f"127.0.0.1:{base + i}" for i in range(len(RACKS)))
    finally:
        subprocess.run([sys.executable, "-m", "fauxka", "down", "--data-dir", str(data_dir)], capture_output=True,
                       timeout=120)


def replicas(admin, topic: str) -> dict[int, list[int]]:
    metadata = admin.list_topics(topic, timeout=20)
    return {p.id: list(p.replicas) for p in metadata.topics[topic].partitions.values()}


def test_clients_see_each_brokers_rack(racked):
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": racked})  # kept: its futures die with it
    cluster = admin.describe_cluster().result(20)
    assert {node.id: node.rack for node in cluster.nodes} == RACKS


@pytest.mark.parametrize("replication_factor", [2, 3])
def test_created_and_added_partitions_span_the_racks(racked, replication_factor):
    from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
    admin = AdminClient({"bootstrap.servers": racked})
    topic = unique("racked")
    admin.create_topics([NewTopic(topic, 8, replication_factor)])[topic].result(30)
    created = replicas(admin, topic)
    admin.create_partitions([NewPartitions(topic, 12)])[topic].result(30)
    grown = replicas(admin, topic)
    assert len(created) == 8 and len(grown) == 12 and {p: grown[p] for p in created} == created
    for partition, brokers in grown.items():
        assert len(set(brokers)) == replication_factor
        assert {RACKS[b] for b in brokers} == {"rack-a", "rack-b"}, (partition, brokers)
    # the first replica walks the rack-alternated brokers (a, b, a, b): each leads as many as the others
    assert set(Counter(brokers[0] for brokers in created.values()).values()) == {2}
