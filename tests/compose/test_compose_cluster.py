"""The shipped docker-compose.yml, brought up with the real engine (issue 18).

Run by `make compose-test` (CI runs it after `make test`); skipped elsewhere. The tests share one
project, in this order: up and health, the host side (confluent-kafka, `fauxka status`), the
compose network's side (aiokafka in the broker image), Prometheus, an unknown KAFKA_ variable
(`run`, then in the file: an unhealthy broker), produce and consume through every broker from
both sides, a consumer group from the host, a killed controller's restart, down + up keeping the
data (records and group commits too), down -v wiping it. The project is taken down
with its volumes whatever fails."""

import json
import os
import subprocess
import sys
import textwrap
import time
import urllib.parse
import urllib.request

import pytest
from confluent_kafka import ElectionType, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

from fauxka.broker.protocol import health
from tests.compose.engine import BROKERS, SERVICES, Compose, docker, engine_available
from tests.harness import wait_for

pytestmark = [
    pytest.mark.skipif(os.environ.get("FAUXKA_COMPOSE_TEST") != "1",
                       reason="the docker-compose cluster test: run it with `make compose-test`"),
    pytest.mark.timeout(600),
]

TOPIC = "compose-rf3"
DATA_PLANE = {0, 1, 2}  # Produce, Fetch, ListOffsets: what the produce/consume checks need


@pytest.fixture(scope="module")
def compose():
    problem = engine_available()
    if problem:  # under make compose-test a missing engine is a failure, never a skip
        pytest.fail(f"no container engine: {problem} (start one: ../shared/tools/container-engine.sh start)")
    project = Compose.with_free_ports()
    project.down(volumes=True)  # what a crashed earlier run left
    try:
        project.up("--build", label="up --build")  # cold on a fresh machine: the images are built
        yield project
    finally:
        print(f"\ncompose timings: {json.dumps({k: round(v, 1) for k, v in project.timings.items()})}")
        project.down(volumes=True)


@pytest.fixture(scope="module")
def state():
    return {}


def admin(compose: Compose) -> AdminClient:
    return AdminClient({"bootstrap.servers": compose.bootstrap, "socket.timeout.ms": 10000})


def describe_cluster(compose: Compose):
    client = admin(compose)  # kept alive until the answer: a collected client fails its futures
    return client.describe_cluster(request_timeout=10).result(15)


def all_partitions(client: AdminClient, topic: str, count: int = 3) -> dict | None:
    """The topic's partitions once Metadata lists all `count` of them."""
    partitions = client.list_topics(topic, timeout=10).topics[topic].partitions
    return partitions if len(partitions) == count else None


def consume(consumer, count: int, timeout_s: float = 30) -> list:
    """(partition, value) of the first `count` records `consumer` polls within the deadline."""
    got = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        message = consumer.poll(1)
        if message is not None and message.error() is None:
            got.append((message.partition(), message.value()))
    return got


def cluster_id(compose: Compose) -> str:
    return describe_cluster(compose).cluster_id


def audit_lines(compose: Compose, text: str) -> int:
    """Lines of the brokers' audit trails (the `audit` volume) that mention `text`."""
    script = f"cat /a/audit-*.log 2>/dev/null | grep -c {text} || true"
    return int(docker("run", "--rm", "-v", f"{compose.project}_audit:/a", "fauxka-broker:latest",
                      "sh", "-c", script).stdout.strip())


def test_every_service_is_healthy_with_a_restart_policy(compose):
    for service in SERVICES:
        assert compose.health(service) == "healthy", service
        assert compose.inspect(service)["HostConfig"]["RestartPolicy"]["Name"] == "unless-stopped", service


def test_host_side_metadata_and_admin(compose, state):
    client = admin(compose)
    metadata = client.list_topics(timeout=10)
    assert {b.id: (b.host, b.port) for b in metadata.brokers.values()} == {
        n: ("localhost", compose.port(f"FAUXKA_PORT_{n}")) for n in (1, 2, 3)}
    futures = client.create_topics([NewTopic(TOPIC, num_partitions=3, replication_factor=3)], request_timeout=15)
    futures[TOPIC].result(20)
    # CreateTopics answers once the broker that took it sees the leaders; the others learn of the
    # topic from ZooKeeper tens of ms later (Kafka's UpdateMetadata lags the same way)
    partitions = wait_for(lambda: all_partitions(client, TOPIC), 10, 0.1, f"{TOPIC} in Metadata")
    assert all(sorted(p.replicas) == [1, 2, 3] for p in partitions.values())
    resource = ConfigResource("topic", TOPIC, incremental_configs=[
        ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
    client.incremental_alter_configs([resource])[resource].result(20)
    described = client.describe_configs([ConfigResource("topic", TOPIC)])
    configs = next(iter(described.values())).result(20)
    assert configs["retention.ms"].value == "3600000"
    state["cluster_id"] = cluster_id(compose)
    status = subprocess.run([sys.executable, "-m", "fauxka", "status", "--bootstrap", compose.bootstrap,
                             "--zookeeper", f"localhost:{compose.port('FAUXKA_ZOOKEEPER_PORT')}"],
                            capture_output=True, text=True, timeout=60)
    assert status.returncode == 0, status.stderr
    assert f"cluster id: {state['cluster_id']}" in status.stdout and "brokers:    1, 2, 3" in status.stdout
    assert "(epoch " in status.stdout, status.stdout  # the controller epoch, read from ZooKeeper on the host


def test_compose_network_side_metadata_and_admin(compose):
    script = textwrap.dedent("""
        import asyncio, json
        from aiokafka.admin import AIOKafkaAdminClient, NewTopic
        from aiokafka.client import AIOKafkaClient

        async def main():
            client = AIOKafkaClient(bootstrap_servers="broker-2:9092")
            await client.bootstrap()
            brokers = sorted([b.nodeId, b.host, b.port] for b in client.cluster.brokers())
            await client.close()
            admin = AIOKafkaAdminClient(bootstrap_servers="broker-3:9092")
            await admin.start()
            response = await admin.create_topics([NewTopic("from-network", 1, 3)])
            errors = [t[1] for t in response.topic_errors]
            # the answer comes from the controller; another broker's Metadata may lag (as in Kafka)
            for _ in range(100):
                topics = sorted(await admin.list_topics())
                if "from-network" in topics:
                    break
                await asyncio.sleep(0.1)
            await admin.close()
            print(json.dumps({"brokers": brokers, "topics": topics, "errors": errors}))

        asyncio.run(main())
    """)
    seen = json.loads(compose.in_network(script).strip().splitlines()[-1])
    assert seen["brokers"] == [[n, f"broker-{n}", 9092] for n in (1, 2, 3)]
    assert seen["errors"] == [0]
    assert "from-network" in seen["topics"] and TOPIC in seen["topics"]


def test_prometheus_scrapes_the_three_brokers(compose):
    url = (f"http://localhost:{compose.port('FAUXKA_PROMETHEUS_PORT')}/api/v1/query?query="
           + urllib.parse.quote('up{job="fauxka"}'))

    def all_up():
        with urllib.request.urlopen(url, timeout=5) as response:
            results = json.load(response)["data"]["result"]
        up = sorted(r["metric"]["instance"] for r in results if r["value"][1] == "1")
        return up if up == [f"{b}:7070" for b in BROKERS] else None

    wait_for(all_up, 30, 0.5, "Prometheus sees the three brokers up")


def test_prometheus_loads_strimzis_kafka_alerts(compose):
    """config/prometheus/kafka-rules.yml, mounted at /etc/prometheus/rules: every alert loaded and none firing
    on a healthy cluster (one active controller, nothing under-replicated)."""
    url = f"http://localhost:{compose.port('FAUXKA_PROMETHEUS_PORT')}/api/v1/rules?type=alert"
    with urllib.request.urlopen(url, timeout=5) as response:
        groups = json.load(response)["data"]["groups"]
    rules = {r["name"]: r["state"] for g in groups for r in g["rules"]}
    assert sorted(rules) == ["AbnormalControllerState", "OfflineLogDirectoryCount", "OfflinePartitions",
                             "UnderMinIsrPartitionCount", "UnderReplicatedPartitions"]
    assert "firing" not in rules.values(), rules

def test_an_unknown_kafka_variable_stops_the_broker_naming_it(compose):
    result = compose.run("run", "--rm", "--no-deps", "-e", "KAFKA_NO_SUCH_SETTING=1", "broker-3", check=False)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [line for line in (result.stdout + result.stderr).splitlines() if "KAFKA_NO_SUCH_SETTING" in line]
    assert len(lines) == 1 and "fauxka does not know" in lines[0], result.stdout + result.stderr


def test_a_broker_with_an_unknown_variable_is_unhealthy_and_says_why(compose, tmp_path):
    bad = tmp_path / "bad-broker-3.yml"
    bad.write_text('services:\n  broker-3:\n    environment:\n      KAFKA_NO_SUCH_SETTING: "1"\n')
    result = compose.run("up", "-d", "--wait", "broker-3", overrides=(bad,), check=False, timeout_s=120)
    assert result.returncode != 0 and "broker-3-1 is unhealthy" in result.stderr, result.stderr
    assert compose.health("broker-3") != "healthy"
    assert "fauxka broker: KAFKA_NO_SUCH_SETTING names the broker property no.such.setting" in compose.logs("broker-3")
    compose.up()  # the shipped file again: broker-3 recreated with its own environment
    assert compose.health("broker-3") == "healthy"


def test_produce_and_consume_through_every_broker(compose, state):
    """Acknowledged (acks=all) records from the host and from the compose network, read back from
    every partition; TOPIC's three partitions are led by the three brokers, so each broker takes
    Produce and Fetch. Partitions are assigned, not subscribed (the group test follows). The
    records are read again after down + up (test_down_and_up_keep_topics_configs_and_cluster_id)."""
    import socket

    with socket.create_connection(("localhost", compose.port("FAUXKA_PORT_1")), 5) as sock:
        sock.settimeout(5)
        assert DATA_PLANE <= set(health.api_versions(sock))
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer

    # broker-3 was recreated above and its leadership moved: the preferred leaders (Kafka's
    # round-robin first replicas, one per broker) back by ElectLeaders
    client = admin(compose)
    client.elect_leaders(ElectionType.PREFERRED, [TopicPartition(TOPIC, p) for p in range(3)]).result(20)

    def leaders():
        partitions = client.list_topics(TOPIC, timeout=10).topics[TOPIC].partitions
        return sorted(p.leader for p in partitions.values()) == [1, 2, 3]
    wait_for(leaders, 15, 0.2, f"{TOPIC}'s partitions led by brokers 1, 2, 3")
    producer = Producer({"bootstrap.servers": compose.bootstrap, "acks": "all"})
    sent = [(p, f"host-{p}".encode()) for p in range(3)]
    for partition, value in sent:
        producer.produce(TOPIC, value, partition=partition)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": compose.bootstrap, "group.id": "compose-test",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(3)])
    got = consume(consumer, len(sent))
    consumer.close()
    assert sorted(got) == sorted(sent)
    script = textwrap.dedent(f"""
        import asyncio
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

        async def main():
            for n in (1, 2, 3):
                producer = AIOKafkaProducer(bootstrap_servers=f"broker-{{n}}:9092", acks="all")
                await producer.start()
                await producer.send_and_wait("{TOPIC}", f"network-{{n}}".encode(), partition=n - 1)
                await producer.stop()
            consumer = AIOKafkaConsumer(bootstrap_servers="broker-1:9092", auto_offset_reset="earliest")
            await consumer.start()
            consumer.assign([TopicPartition("{TOPIC}", p) for p in range(3)])
            values = []
            while len(values) < 6:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
                values += [m.value.decode() for messages in batch.values() for m in messages]
            await consumer.stop()
            print(sorted(values))

        asyncio.run(main())
    """)
    out = compose.in_network(script)
    assert all(f"network-{n}" in out and f"host-{n - 1}" in out for n in (1, 2, 3)), out
    state["records"] = sorted(sent + [(n - 1, f"network-{n}".encode()) for n in (1, 2, 3)])


def test_a_consumer_group_from_the_host(compose, state):
    """A subscribed consumer (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetCommit through
    the published ports) gets every partition of TOPIC and commits; a second member's join moves
    partitions to it. The commits are read again after down + up."""
    from confluent_kafka import Consumer

    settings = {"bootstrap.servers": compose.bootstrap, "group.id": "compose-group",
                "auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 10000}
    first = Consumer(settings)
    first.subscribe([TOPIC])
    got = consume(first, len(state["records"]), 60)
    assert sorted(got) == state["records"]
    first.commit(asynchronous=False)
    committed = first.committed([TopicPartition(TOPIC, p) for p in range(3)], timeout=15)
    assert sorted((tp.partition, tp.offset) for tp in committed) == [(0, 2), (1, 2), (2, 2)]
    second = Consumer(settings)
    second.subscribe([TOPIC])

    def split():
        first.poll(0.2)
        second.poll(0.2)
        mine, theirs = first.assignment(), second.assignment()
        return len(mine) + len(theirs) == 3 and mine and theirs
    wait_for(split, 60, 0, "the group's three partitions split between two members")
    second.close()
    first.close()
    state["group"] = "compose-group"


def test_a_killed_controller_is_restarted_and_the_cluster_serves(compose):
    controller = describe_cluster(compose).controller.id
    service = f"broker-{controller}"
    before = compose.inspect(service)
    started = time.monotonic()
    os.kill(before["State"]["Pid"], 9)  # the broker's process, as an OOM kill would
    wait_for(lambda: compose.inspect(service)["RestartCount"] > before["RestartCount"], 30, 0.5,
             f"{service} restarted by its restart policy")
    wait_for(lambda: compose.health(service) == "healthy", 60, 0.5, f"{service} healthy again")
    compose.timings["killed controller healthy again"] = time.monotonic() - started
    client = admin(compose)
    client.create_topics([NewTopic("after-restart", 1, 3)], request_timeout=15)["after-restart"].result(20)
    assert len(client.list_topics(timeout=10).brokers) == 3


def test_down_and_up_keep_topics_configs_and_cluster_id(compose, state):
    compose.down()
    assert {f"{compose.project}_{v}" for v in ("zookeeper-data", "broker-1-data", "audit")} <= set(compose.volumes())
    for n in (1, 2, 3):  # log.dirs is the volume: a replica of every partition of TOPIC (RF 3)
        listing = docker("run", "--rm", "-v", f"{compose.project}_broker-{n}-data:/d", "fauxka-broker:latest",
                         "ls", "/d").stdout.split()
        assert {f"{TOPIC}-{p}" for p in range(3)} <= set(listing), listing
    compose.up(label="up after down (warm)")
    assert compose.timings["up after down (warm)"] < 30  # 6-10 s measured; the goal is 10 s
    assert cluster_id(compose) == state["cluster_id"]
    client = admin(compose)
    topics = client.list_topics(timeout=10).topics
    assert {TOPIC, "from-network", "after-restart"} <= set(topics)
    described = client.describe_configs([ConfigResource("topic", TOPIC)])
    assert next(iter(described.values())).result(20)["retention.ms"].value == "3600000"
    assert audit_lines(compose, TOPIC) >= 2  # its creation and its config change, kept in the audit volume
    # every acknowledged record survives (the partition logs are in the broker-N-data volumes) ...
    from confluent_kafka import OFFSET_BEGINNING, Consumer

    consumer = Consumer({"bootstrap.servers": compose.bootstrap, "group.id": "compose-after-up",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(3)])
    got = consume(consumer, len(state["records"]))
    got += consume(consumer, 1, 2)  # nothing more: no record duplicated
    consumer.close()
    assert sorted(got) == state["records"]
    # ... and the group's commits (__consumer_offsets, RF 3, in the same volumes)
    group = Consumer({"bootstrap.servers": compose.bootstrap, "group.id": state["group"]})
    committed = group.committed([TopicPartition(TOPIC, p) for p in range(3)], timeout=15)
    group.close()
    assert sorted((tp.partition, tp.offset) for tp in committed) == [(0, 2), (1, 2), (2, 2)]


def test_down_v_is_the_clean_slate(compose, state):
    compose.down(volumes=True)
    assert compose.volumes() == []
    compose.up(label="up after down -v")
    assert cluster_id(compose) != state["cluster_id"]
    client = admin(compose)
    topics = client.list_topics(timeout=10).topics
    assert not {TOPIC, "from-network", "after-restart"} & set(topics)
    # the audit trail of the earlier writes went with the audit volume
    assert audit_lines(compose, TOPIC) == 0

