"""connections.max.idle.ms: a connection that sends nothing for that long is closed, as Kafka's
Selector closes idle channels (librdkafka then logs "Disconnected (after ...ms in state UP)"
and reconnects); one that keeps sending requests stays open."""

import socket
import struct
import time

import pytest
from confluent_kafka import Producer

pytestmark = pytest.mark.disruptive

IDLE_MS = 1500
API_VERSIONS_V0 = struct.pack(">i", 10) + struct.pack(">hhih", 18, 0, 7, -1)


def _api_versions(sock: socket.socket) -> None:
    sock.sendall(API_VERSIONS_V0)
    size = struct.unpack(">i", _read(sock, 4))[0]
    _read(sock, size)


def _read(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed by the broker")
        data += chunk
    return data


@pytest.fixture(scope="module")
def idle_cluster(make_cluster_module):
    return make_cluster_module(size=1, overrides={"connections.max.idle.ms": str(IDLE_MS)})


def test_an_idle_connection_is_closed_and_a_busy_one_is_not(idle_cluster):
    address = idle_cluster.brokers[1].address
    with socket.create_connection(address, timeout=30) as idle, socket.create_connection(address, timeout=30) as busy:
        _api_versions(idle)
        _api_versions(busy)
        deadline = time.monotonic() + 3 * IDLE_MS / 1000
        while time.monotonic() < deadline:  # requests more often than the idle limit keep it open
            time.sleep(IDLE_MS / 4000)
            _api_versions(busy)
        assert idle.recv(1) == b""  # closed by the broker (the 30 s socket timeout would raise)
        _api_versions(busy)


def test_a_producer_reconnects_after_its_idle_connection_was_closed(idle_cluster):
    closed = []
    producer = Producer({"bootstrap.servers": idle_cluster.bootstrap, "enable.idempotence": True,
                         "log_level": 7, "debug": "broker",
                         "logger": _Logger(closed)})
    delivered = []
    producer.produce("idle-topic", b"before", on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(30) == 0
    time.sleep(3 * IDLE_MS / 1000)
    producer.poll(0)
    producer.produce("idle-topic", b"after", on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(30) == 0
    assert delivered == [None, None]
    assert any("Disconnected" in line for line in closed), closed[-20:]


class _Logger:
    """A logging.Logger stand-in for librdkafka's log lines (confluent-kafka calls .log)."""

    def __init__(self, lines: list[str]):
        self.lines = lines

    def log(self, level, fmt, *args):
        self.lines.append(fmt % args if args else fmt)
