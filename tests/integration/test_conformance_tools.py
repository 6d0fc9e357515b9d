"""The stand-ins for Kafka's kafka-topics.sh and kafka-acls.sh that librdkafka's tests run in
`make conformance` (conformance/kafka/bin): run as the tests run them, against a cluster configured
as librdkafka's default test scenario (conformance/scenarios.py's default), checked through
confluent-kafka's admin client."""

import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import (AclBindingFilter, AclOperation, AclPermissionType, AdminClient, ConfigResource,
                                   ResourcePatternType, ResourceType)

from tests.admin_helpers import unique
from tests.harness import Cluster, wait_for

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "conformance" / "kafka" / "bin"
sys.path.insert(0, str(ROOT / "conformance"))
from scenarios import SCENARIOS, broker_settings  # noqa: E402  (conformance/ is scripts, not a package)


@pytest.fixture(scope="module")
def scenario_cluster(zookeeper, tmp_path_factory):
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("conformance"), 3,
                      dict(item.split("=", 1) for item in broker_settings(SCENARIOS["default"], None)))
    cluster.start()
    yield cluster
    cluster.stop()


def tool(name: str, cluster: Cluster, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / name), "--bootstrap-server", cluster.bootstrap, *args],
                          capture_output=True, text=True, timeout=120)


def partitions(admin: AdminClient, topic: str) -> int:
    topics = admin.list_topics(topic, timeout=10).topics
    return len(topics[topic].partitions) if topic in topics and topics[topic].error is None else -1


def test_kafka_topics_creates_alters_and_deletes(scenario_cluster):
    admin = AdminClient({"bootstrap.servers": scenario_cluster.bootstrap})
    topic = unique("conformance")
    created = tool("kafka-topics.sh", scenario_cluster, "--create", "--topic", topic, "--replication-factor", "1",
                   "--partitions", "1", "--config", "message.timestamp.type=LogAppendTime",
                   "--config", "segment.bytes=10000")
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == f"Created topic {topic}."
    wait_for(lambda: partitions(admin, topic) == 1, 30, what="the topic in Metadata")
    configs = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    values = next(iter(configs.values())).result(timeout=30)
    assert values["message.timestamp.type"].value == "LogAppendTime"
    assert values["segment.bytes"].value == "10000"

    again = tool("kafka-topics.sh", scenario_cluster, "--create", "--topic", topic, "--partitions", "1")
    assert again.returncode == 1 and "TOPIC_ALREADY_EXISTS" in again.stderr

    altered = tool("kafka-topics.sh", scenario_cluster, "--alter", "--topic", topic, "--partitions", "4")
    assert altered.returncode == 0, altered.stderr
    wait_for(lambda: partitions(admin, topic) == 4, 30, what="4 partitions in Metadata")

    deleted = tool("kafka-topics.sh", scenario_cluster, "--delete", "--topic", topic)
    assert deleted.returncode == 0, deleted.stderr
    wait_for(lambda: topic not in admin.list_topics(timeout=10).topics, 30, what="the topic gone from Metadata")


def test_kafka_acls_adds_and_removes(scenario_cluster):
    admin = AdminClient({"bootstrap.servers": scenario_cluster.bootstrap})
    topic = unique("conformance-acl")
    mine = AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, None, None,
                            AclOperation.ANY, AclPermissionType.ANY)

    def acls() -> set[tuple]:
        return {(b.principal, b.host, b.operation, b.permission_type)
                for b in admin.describe_acls(mine, request_timeout=30).result(timeout=35)}

    for args in (["--allow-principal", "User:*", "--operation", "Describe", "--allow-host", "*"],
                 ["--deny-principal", "User:*", "--operation", "Read", "--deny-host", "*"]):
        added = tool("kafka-acls.sh", scenario_cluster, "--add", *args, "--topic", topic)
        assert added.returncode == 0, added.stderr
    assert acls() == {("User:*", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW),
                      ("User:*", "*", AclOperation.READ, AclPermissionType.DENY)}

    removed = tool("kafka-acls.sh", scenario_cluster, "--remove", "--force", "--deny-principal", "User:*",
                   "--operation", "Read", "--deny-host", "*", "--topic", topic)
    assert removed.returncode == 0, removed.stderr
    assert acls() == {("User:*", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW)}
