"""The controller records the topics it creates instead of reading them back from ZooKeeper
(issue 7), and still sees every later change to them: its own CreatePartitions and
AlterConfigs, and what another controller writes after this one resigned (see
test_faults_shutdown for the resignation)."""

import re
import urllib.request

from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions, NewTopic

from tests.admin_helpers import unique
from tests.harness import wait_for


def metric(broker, pattern: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=5) as response:
        text = response.read().decode()
    return float(re.search(rf"^{pattern} (\S+)$", text, re.M).group(1))


def zk_reads(broker) -> float:
    return metric(broker, r'fauxka_zookeeper_requests\{kind="read"\}')


def partition_leaders(admin: AdminClient, topic: str) -> list[int]:
    metadata = admin.list_topics(topic, timeout=10)
    return sorted(p.leader for p in metadata.topics[topic].partitions.values())


def test_created_topics_are_known_to_the_controller_without_reading_them_back(cluster):
    controller = cluster.controller_id()
    admin = AdminClient({"bootstrap.servers": cluster.address_of(controller)})
    names = [unique("recorded") for _ in range(40)]
    before = zk_reads(cluster.brokers[controller])
    for future in admin.create_topics([NewTopic(n, 3, 1) for n in names], operation_timeout=15).values():
        future.result(30)
    reads = zk_reads(cluster.brokers[controller]) - before
    assert reads < len(names), f"{reads} ZooKeeper reads for {len(names)} topics"  # 5 per topic if read back
    for name in names:  # the controller answers from what it recorded
        leaders = partition_leaders(admin, name)
        assert len(leaders) == 3 and all(leader in cluster.brokers for leader in leaders)
    # the other brokers read them through their watches; every cache ends up the same size
    counts = lambda: {(metric(b, "fauxka_metadata_topics"), metric(b, "fauxka_metadata_partitions"))
                      for b in cluster.brokers.values()}
    wait_for(lambda: len(counts()) == 1, 10, what="every broker's cache holds the same topics")
    topics, partitions = counts().pop()
    assert topics >= len(names) and partitions >= 3 * len(names)


def test_the_controller_sees_its_own_later_changes_to_a_recorded_topic(cluster):
    controller = cluster.controller_id()
    other = next(b for b in cluster.brokers if b != controller)
    admin = AdminClient({"bootstrap.servers": cluster.address_of(controller)})
    name = unique("recorded")
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    admin.create_partitions([NewPartitions(name, 4)])[name].result(30)
    resource = ConfigResource("TOPIC", name, incremental_configs=[ConfigEntry("retention.ms", "4321", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(30)
    for broker in (controller, other):
        client = AdminClient({"bootstrap.servers": cluster.address_of(broker)})
        wait_for(lambda: len(partition_leaders(client, name)) == 4, 10, what=f"4 partitions on broker {broker}")
        described = client.describe_configs([ConfigResource("TOPIC", name)])
        assert next(iter(described.values())).result(10)["retention.ms"].value == "4321"
