"""docker-compose.yml with docker-compose.tls.yml merged over it, brought up with the real engine
(issues 16 and 18: the compose topology runnable with TLS).

Run by `make compose-test` after the plain file's test, under a project of its own: the one-shot
`certs` service makes a throw-away CA into the `tls` volume, the brokers replicate over their SSL
listener, and a host client reaches every broker over the published SSL_HOST ports with the CA
copied out of the volume (`docker compose cp`, as docs/compose.md says). Taken down with its volumes
whatever fails."""

import json
import os
import re

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.compose.engine import BROKERS, TLS_OVERLAY, Compose, engine_available
from tests.compose.test_compose_cluster import all_partitions, consume
from tests.harness import wait_for

pytestmark = [
    pytest.mark.skipif(os.environ.get("FAUXKA_COMPOSE_TEST") != "1",
                       reason="the docker-compose cluster test: run it with `make compose-test`"),
    pytest.mark.timeout(600),
]

TOPIC = "compose-tls"


@pytest.fixture(scope="module")
def compose():
    problem = engine_available()
    if problem:
        pytest.fail(f"no container engine: {problem} (start one: ../shared/tools/container-engine.sh start)")
    project = Compose.with_free_ports("fauxka-compose-tls-test", files=(TLS_OVERLAY,))
    project.down(volumes=True)
    try:
        project.up("--build", label="tls up --build")  # the images are cached by the plain test
        yield project
    finally:
        print(f"\ncompose TLS timings: {json.dumps({k: round(v, 1) for k, v in project.timings.items()})}")
        project.down(volumes=True)


@pytest.fixture(scope="module")
def tls(compose, tmp_path_factory):
    """The certs service's material, copied to the host."""
    directory = tmp_path_factory.mktemp("compose-tls") / "tls"
    compose.run("cp", "certs:/tls", str(directory))
    return directory


def ssl_settings(compose: Compose, tls, client_certificate: bool = False) -> dict:
    settings = {"bootstrap.servers": compose.tls_bootstrap, "security.protocol": "SSL",
                "ssl.ca.location": str(tls / "ca.pem"), "socket.timeout.ms": 10000}
    if client_certificate:
        settings |= {"ssl.certificate.location": str(tls / "client.pem"), "ssl.key.location": str(tls / "client.key")}
    return settings


def test_certs_ran_once_and_every_broker_is_healthy(compose, tls):
    certs = compose.run("ps", "-a", "-q", "certs").stdout.strip()
    state = compose.inspect_id(certs)["State"]
    assert (state["Status"], state["ExitCode"]) == ("exited", 0)
    assert "CA /tls/ca.pem" in compose.logs("certs")
    assert {p.name for p in tls.iterdir()} >= {"ca.pem", "broker.pem", "client.pem", "client.key"}
    for service in (*BROKERS, "zookeeper"):
        assert compose.health(service) == "healthy", service


def test_admin_produce_and_consume_over_ssl_from_the_host(compose, tls):
    client = AdminClient(ssl_settings(compose, tls))
    metadata = client.list_topics(timeout=10)
    assert {b.id: (b.host, b.port) for b in metadata.brokers.values()} == {
        n: ("localhost", compose.port(f"FAUXKA_TLS_PORT_{n}")) for n in (1, 2, 3)}
    client.create_topics([NewTopic(TOPIC, 3, 3)], request_timeout=15)[TOPIC].result(20)
    partitions = wait_for(lambda: all_partitions(client, TOPIC), 10, 0.1, f"{TOPIC} in Metadata")
    assert sorted(p.leader for p in partitions.values()) == [1, 2, 3]  # every broker takes a Produce
    producer = Producer({**ssl_settings(compose, tls), "acks": "all"})  # acks=all: replicated over SSL
    sent = [(p, f"tls-{p}".encode()) for p in range(3)]
    for partition, value in sent:
        producer.produce(TOPIC, value, partition=partition)
    assert producer.flush(30) == 0
    consumer = Consumer({**ssl_settings(compose, tls, client_certificate=True), "group.id": "compose-tls",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(3)])
    got = consume(consumer, len(sent))
    consumer.close()
    assert sorted(got) == sent


def test_brokers_talk_to_each_other_over_ssl(compose):
    """Followers fetch and brokers reach the controller over the inter-broker listener, SSL: the
    brokers' connection gauges count them there (the plaintext listener has only healthchecks)."""
    script = ("import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:7070/metrics', timeout=5)"
              ".read().decode())")
    pattern = re.compile(r'^kafka_server_socket_server_metrics_connection_count\{listener="SSL",networkProcessor="0"\} (\S+)$', re.M)

    def ssl_connections():
        total = 0
        for service in BROKERS:
            metrics = compose.run("exec", "-T", service, "python", "-c", script).stdout
            total += sum(float(v) for v in pattern.findall(metrics))
        return total >= 2 and total
    wait_for(ssl_connections, 20, 0.5, "inter-broker connections on the SSL listener")


def test_down_and_up_keep_the_ca(compose, tls):
    compose.down()
    compose.up(label="tls up after down (warm)")
    assert "TLS material kept" in compose.logs("certs")
    client = AdminClient(ssl_settings(compose, tls))  # the CA copied before still verifies the brokers
    assert TOPIC in client.list_topics(timeout=10).topics
