"""Real Kafka clients bootstrap against the shared 3-broker cluster."""

import asyncio
import shutil
import subprocess

import pytest


def test_confluent_kafka_lists_brokers_controller_and_cluster_id(cluster):
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": cluster.bootstrap}).list_topics(timeout=10)
    assert sorted(md.brokers) == [1, 2, 3]
    assert md.controller_id in (1, 2, 3)
    assert md.cluster_id == cluster.metadata(1).cluster_id
    assert len(md.cluster_id) == 22  # Kafka's base64 uuid
    for broker_id, broker in md.brokers.items():
        assert (broker.host, broker.port) == cluster.brokers[broker_id].address


def test_kafka_python_describes_the_cluster(cluster):
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=10000)
    try:
        described = admin.describe_cluster()
    finally:
        admin.close()
    assert sorted(b["broker_id"] for b in described["brokers"]) == [1, 2, 3]
    assert described["controller_id"] in (1, 2, 3)
    assert described["cluster_id"] == cluster.metadata(2).cluster_id


def test_every_broker_names_the_same_controller(cluster):
    views = [cluster.metadata(i) for i in (1, 2, 3)]
    assert len({v.controller_id for v in views}) == 1
    assert all(v.brokers == [1, 2, 3] for v in views)


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed")
def test_kcat_lists_three_brokers(cluster):
    out = subprocess.run(["kcat", "-L", "-b", cluster.bootstrap, "-m", "10"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "3 brokers:" in out.stdout
    for broker_id, broker in cluster.brokers.items():
        assert f"broker {broker_id} at 127.0.0.1:{broker.port}" in out.stdout
    assert out.stdout.count("(controller)") == 1


def test_aiokafka_bootstraps_and_fetches_metadata(cluster):
    import aiokafka

    async def fetch():
        client = aiokafka.AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
        await client.bootstrap()
        try:
            return {b.nodeId for b in client.cluster.brokers()}, client.cluster.controller
        finally:
            await client.close()

    brokers, controller = asyncio.run(fetch())
    assert brokers == {1, 2, 3}
    assert controller is not None and controller.nodeId in brokers
