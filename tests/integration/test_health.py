"""The container healthcheck (fauxka/broker/protocol/health.py) against real brokers: its hand-written
ApiVersions v0 and Metadata v1 must parse what the broker answers."""

import socket
import subprocess
import sys

from fauxka.broker.protocol import health
from fauxka.broker.protocol.api_table import TABLE


def test_a_registered_broker_is_healthy(cluster):
    host, port = cluster.brokers[2].address
    assert health.check(host, port, 2) is None


def test_api_versions_lists_what_the_api_table_serves(cluster):
    with socket.create_connection(cluster.brokers[1].address, 5) as sock:
        sock.settimeout(5)
        versions = health.api_versions(sock)
        ids, controller = health.registered_brokers(sock)
    assert set(versions) == set(TABLE)
    assert ids == [1, 2, 3] and controller in ids


def test_an_unregistered_id_and_a_closed_port_are_unhealthy(cluster):
    host, port = cluster.brokers[1].address
    assert health.check(host, port, 9).startswith("broker 9 not registered yet (registered: [1, 2, 3]")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    assert health.check("127.0.0.1", closed, 1).startswith(f"no answer from 127.0.0.1:{closed}")


def test_the_command_takes_its_defaults_from_the_kafka_environment(cluster):
    host, port = cluster.brokers[3].address
    env = {"KAFKA_LISTENERS": f"PLAINTEXT://0.0.0.0:{port},PLAINTEXT_HOST://0.0.0.0:1", "KAFKA_BROKER_ID": "3"}
    result = subprocess.run([sys.executable, "-m", "fauxka.broker.protocol.health"], env=env,
                            capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stdout.strip()) == (
        0, f"healthy: 127.0.0.1:{port} answers ApiVersions, broker 3 registered")
    env["KAFKA_BROKER_ID"] = "7"
    result = subprocess.run([sys.executable, "-m", "fauxka.broker.protocol.health"], env=env,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "broker 7 not registered" in result.stdout
