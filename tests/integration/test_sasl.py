"""SASL_PLAINTEXT listeners (PLAIN, SCRAM-SHA-256/512) with real clients, and the SCRAM credential apis."""

import asyncio
import json
import shutil
import subprocess

import pytest

from fauxka.broker.auth.client import SaslClientError, authenticate
from fauxka.broker.auth.scram import ScramClient
from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import decode_response, encode_request, request_schema
from fauxka.broker.protocol.framing import read_frame, with_size_prefix
from tests.admin_helpers import send, unique
from tests.harness import Cluster, wait_for

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OVERRIDES = {
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
    "listener.name.client.plain.sasl.jaas.config": f'{PLAIN} required username="broker" password="broker-secret" '
                                                   'user_broker="broker-secret" user_alice="alice-secret";',
    "listener.name.client.scram-sha-256.sasl.jaas.config": f"{SCRAM} required;",
    "listener.name.client.scram-sha-512.sasl.jaas.config": f"{SCRAM} required;",
}
METADATA_VALUES = {"topics": None, "allow_auto_topic_creation": False,
                   "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False}
METADATA = build(request_schema(3, 9), METADATA_VALUES)


@pytest.fixture(scope="module")
def sasl_cluster(zookeeper, tmp_path_factory):
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("sasl-cluster"), 2, OVERRIDES, {"CLIENT": "SASL_PLAINTEXT"})
    cluster.start()
    yield cluster
    cluster.stop()


def client_ports(cluster) -> set[int]:
    return {b.listener_ports["CLIENT"] for b in cluster.brokers.values()}


def confluent(cluster, mechanism="PLAIN", user="alice", password="alice-secret", **extra):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": cluster.listener_bootstrap("CLIENT"), "security.protocol": "SASL_PLAINTEXT",
                        "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password, **extra})


async def open_client(address: str) -> KafkaConnection:
    host, _, port = address.rpartition(":")
    return await KafkaConnection.open(host, int(port), 5.0)


async def try_authenticate(address: str, mechanism: str, user: str, password: str) -> bool:
    conn = await open_client(address)
    try:
        await authenticate(conn, mechanism, user, password, 5.0)
        return (await conn.send(METADATA, 5.0)).brokers is not None
    except SaslClientError:
        return False
    finally:
        await conn.close()


class Raw:
    """Frames on one socket: Kafka requests and raw SASL tokens."""

    def __init__(self, reader, writer):
        self.reader, self.writer, self.ids = reader, writer, 0

    @classmethod
    async def open(cls, address: str) -> "Raw":
        host, _, port = address.rpartition(":")
        return cls(*await asyncio.open_connection(host, int(port)))

    async def request(self, api_key: int, version: int, values: dict):
        self.ids += 1
        cls = request_schema(api_key, version)
        self.writer.write(encode_request(build(cls, values), self.ids, "test"))
        frame = await asyncio.wait_for(read_frame(self.reader, 1 << 20), 5)
        return None if frame is None else decode_response(frame, cls)[1]

    async def token(self, token: bytes) -> bytes | None:
        self.writer.write(with_size_prefix(token))
        return await asyncio.wait_for(read_frame(self.reader, 1 << 20), 5)

    async def closed(self) -> bool:
        return await asyncio.wait_for(self.reader.read(1), 5) == b""


def test_clients_list_topics_with_plain(sasl_cluster):
    md = confluent(sasl_cluster).list_topics(timeout=10)
    assert {b.port for b in md.brokers.values()} == client_ports(sasl_cluster)  # the listener's own endpoints

    from kafka.admin import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=sasl_cluster.listener_bootstrap("CLIENT"), request_timeout_ms=10000,
                             security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                             sasl_plain_username="alice", sasl_plain_password="alice-secret")
    try:
        assert sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"]) == [1, 2]
    finally:
        admin.close()

    import aiokafka

    async def fetch():
        client = aiokafka.AIOKafkaClient(bootstrap_servers=sasl_cluster.listener_bootstrap("CLIENT"),
                                         security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                                         sasl_plain_username="alice", sasl_plain_password="alice-secret")
        await client.bootstrap()
        try:
            return {b.port for b in client.cluster.brokers()}
        finally:
            await client.close()
    assert asyncio.run(fetch()) == client_ports(sasl_cluster)


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed")
def test_kcat_lists_brokers_with_plain(sasl_cluster):
    out = subprocess.run(["kcat", "-L", "-b", sasl_cluster.listener_bootstrap("CLIENT"), "-m", "10",
                          "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN",
                          "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "2 brokers:" in out.stdout


def test_wrong_password_fails_and_others_are_served(sasl_cluster):
    from confluent_kafka import KafkaError, KafkaException
    errors = []
    with pytest.raises(KafkaException):
        failing = confluent(sasl_cluster, password="wrong", error_cb=errors.append)
        failing.list_topics(timeout=3)
    failing.poll(1)  # serves the error callbacks
    assert any(e.code() == KafkaError._AUTHENTICATION and "Invalid username or password" in e.str() for e in errors)

    async def exchange():
        raw = await Raw.open(sasl_cluster.listener_address(1, "CLIENT"))
        handshake = await raw.request(17, 1, {"mechanism": "PLAIN"})
        failed = await raw.request(36, 2, {"auth_bytes": b"\0alice\0wrong"})
        return handshake, failed, await raw.closed()
    handshake, failed, closed = asyncio.run(exchange())
    assert (int(handshake.error_code), list(handshake.mechanisms)) == (0, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
    assert (int(failed.error_code), failed.error_message) == (58, "Authentication failed: Invalid username or password")
    assert closed
    assert asyncio.run(try_authenticate(sasl_cluster.listener_address(1, "CLIENT"), "PLAIN", "alice", "alice-secret"))
    assert confluent(sasl_cluster).list_topics(timeout=10).brokers


def test_unsupported_mechanism_and_requests_before_authentication(sasl_cluster):
    address = sasl_cluster.listener_address(2, "CLIENT")

    async def exchange():
        raw = await Raw.open(address)
        unsupported = await raw.request(17, 1, {"mechanism": "GSSAPI"})
        closed_after_unsupported = await raw.closed()
        raw = await Raw.open(address)
        versions = await raw.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        metadata = await raw.request(3, 9, METADATA_VALUES)  # not allowed before authentication
        return unsupported, closed_after_unsupported, versions, metadata
    unsupported, closed, versions, metadata = asyncio.run(exchange())
    assert int(unsupported.error_code) == 33 and list(unsupported.mechanisms) == ["PLAIN", "SCRAM-SHA-256",
                                                                                  "SCRAM-SHA-512"]
    assert closed
    assert {17, 36, 50, 51} <= {k.api_key for k in versions.api_keys}
    assert metadata is None  # closed without an answer


def test_legacy_v0_handshake_with_raw_tokens(sasl_cluster):
    address = sasl_cluster.listener_address(1, "CLIENT")

    async def plain(password: str):
        raw = await Raw.open(address)
        handshake = await raw.request(17, 0, {"mechanism": "PLAIN"})
        reply = await raw.token(f"\0alice\0{password}".encode())
        after = await raw.request(3, 9, METADATA_VALUES) if reply is not None else None
        return handshake, reply, after
    handshake, reply, after = asyncio.run(plain("alice-secret"))
    assert int(handshake.error_code) == 0 and reply == b""  # Kafka's empty frame after PLAIN
    assert {b.port for b in after.brokers} == client_ports(sasl_cluster)
    assert asyncio.run(plain("wrong"))[1] is None  # no answer: closed

    from kafka import KafkaConsumer  # a 0.10.0 client: SaslHandshake v0, then raw tokens
    consumer = KafkaConsumer(bootstrap_servers=address, api_version=(0, 10, 0), security_protocol="SASL_PLAINTEXT",
                             sasl_mechanism="PLAIN", sasl_plain_username="alice", sasl_plain_password="alice-secret")
    try:
        assert isinstance(consumer.topics(), set)
    finally:
        consumer.close()


def test_scram_credentials_then_clients_authenticate(sasl_cluster):
    from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism,
                                       UserScramCredentialUpsertion)
    user = unique("scram")
    admin = AdminClient({"bootstrap.servers": sasl_cluster.controller_address()})
    futures = admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"pw-256"),
        UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), b"pw-512")])
    futures[user].result(10)
    for broker_id in sasl_cluster.brokers:  # every broker's cache follows ZooKeeper
        address = sasl_cluster.listener_address(broker_id, "CLIENT")
        wait_for(lambda: asyncio.run(try_authenticate(address, "SCRAM-SHA-512", user, "pw-512")), 10)
    assert not asyncio.run(try_authenticate(address, "SCRAM-SHA-256", user, "pw-512"))

    for mechanism, password in (("SCRAM-SHA-256", "pw-256"), ("SCRAM-SHA-512", "pw-512")):
        assert confluent(sasl_cluster, mechanism, user, password).list_topics(timeout=10).brokers
        from kafka import KafkaConsumer
        consumer = KafkaConsumer(bootstrap_servers=sasl_cluster.listener_bootstrap("CLIENT"),
                                 security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism,
                                 sasl_plain_username=user, sasl_plain_password=password, request_timeout_ms=10000)
        try:
            assert isinstance(consumer.topics(), set)
        finally:
            consumer.close()

    described = admin.describe_user_scram_credentials([user])[user].result(10)
    assert sorted((i.mechanism.value, i.iterations) for i in described.scram_credential_infos) == [(1, 4096), (2, 8192)]
    stored = json.loads(sasl_cluster.zk_get(f"/config/users/{user}"))
    assert stored["version"] == 1 and set(stored["config"]) == {"SCRAM-SHA-256", "SCRAM-SHA-512"}
    assert stored["config"]["SCRAM-SHA-512"].endswith(",iterations=8192")
    events = [e for e in sasl_cluster.audit_events() if e["resource_name"] == user]
    assert [(e["resource_type"], e["action"], e["error_code"]) for e in events] == [
        ("USER", "ALTER_SCRAM_CREDENTIALS", 0)]
    assert "pw-" not in json.dumps(events) and "salt" not in json.dumps(events)


def test_scram_exchange_with_raw_tokens(sasl_cluster):
    user = unique("legacy")
    upsert = {"name": user, "mechanism": 1, "iterations": 4096, "salt": b"s", "salted_password": b""}
    from fauxka.model.scram_credential import salted_password
    upsert["salted_password"] = salted_password("SCRAM-SHA-256", "pw", b"s", 4096)
    results = send(sasl_cluster.controller_address(), 51, 0, {"deletions": [], "upsertions": [upsert]}).results
    assert [(r.user, int(r.error_code)) for r in results] == [(user, 0)]
    address = sasl_cluster.listener_address(2, "CLIENT")
    wait_for(lambda: asyncio.run(try_authenticate(address, "SCRAM-SHA-256", user, "pw")), 10)

    async def exchange():
        raw = await Raw.open(address)
        await raw.request(17, 0, {"mechanism": "SCRAM-SHA-256"})
        client = ScramClient("SCRAM-SHA-256", user, "pw")
        client.verify(await raw.token(client.final(await raw.token(client.first()))))
        return await raw.request(3, 9, METADATA_VALUES)
    assert asyncio.run(exchange()).brokers


def test_alter_and_describe_errors(sasl_cluster):
    controller = sasl_cluster.controller_address()
    known, absent = unique("known"), unique("absent")
    good = {"name": known, "mechanism": 2, "iterations": 4096, "salt": b"s", "salted_password": b"x" * 64}
    assert int(send(controller, 51, 0, {"deletions": [], "upsertions": [good]}).results[0].error_code) == 0
    response = send(controller, 51, 0, {
        "deletions": [{"name": absent, "mechanism": 1}, {"name": known, "mechanism": 1}],
        "upsertions": [{**good, "name": "few", "iterations": 4095}, {**good, "name": "many", "iterations": 16385},
                       {**good, "name": "odd", "mechanism": 3}, {**good, "name": "twice"}, {**good, "name": "twice"}]})
    assert {(r.user, int(r.error_code), r.error_message) for r in response.results} == {
        ("few", 93, "Too few iterations"), ("many", 93, "Too many iterations"),
        ("odd", 33, "Unknown SCRAM mechanism"),
        ("twice", 92, "A user credential cannot be altered twice in the same request"),
        (absent, 91, "Attempt to delete a user credential that does not exist"),
        (known, 91, "Attempt to delete a user credential that does not exist")}
    described = send(sasl_cluster.address_of(1), 50, 0, {"users": [{"name": known}, {"name": absent},
                                                                    {"name": ""}]}).results
    assert [(r.user, int(r.error_code), r.error_message) for r in described] == [
        (known, 0, None), (absent, 91, f"Attempt to describe a user credential that does not exist: {absent}"),
        ("", 91, "Username must not be empty")]
    assert [(int(i.mechanism), i.iterations) for i in described[0].credential_infos] == [(2, 4096)]
    everyone = send(sasl_cluster.address_of(2), 50, 0, {"users": None}).results
    assert known in [r.user for r in everyone] and absent not in [r.user for r in everyone]


def test_sasl_inter_broker_listener(make_cluster):
    overrides = {**OVERRIDES, "listener.name.broker.plain.sasl.jaas.config": OVERRIDES[
        "listener.name.client.plain.sasl.jaas.config"], "inter.broker.listener.name": "BROKER",
                 "listener.name.broker.sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.inter.broker.protocol": "PLAIN"}
    cluster = make_cluster(1, overrides, extra_listeners={"CLIENT": "SASL_PLAINTEXT", "BROKER": "SASL_PLAINTEXT"})
    address = cluster.listener_address(1, "BROKER")
    assert asyncio.run(try_authenticate(address, "PLAIN", "broker", "broker-secret"))
    assert not asyncio.run(try_authenticate(address, "PLAIN", "broker", "nope"))

    async def pipelined():  # the forwarding channel's connection type
        from fauxka.broker.config import load_config
        from fauxka.broker.protocol.client import PipelinedConnection
        mechanism, user, password = load_config(cluster.brokers[1].config).inter_broker_credentials()
        conn = await PipelinedConnection.open("127.0.0.1", int(address.rpartition(":")[2]), 5.0, "broker-1")
        try:
            await authenticate(conn, mechanism, user, password, 5.0)
            return (await conn.send(METADATA, 5.0)).brokers
        finally:
            await conn.close()
    assert [b.port for b in asyncio.run(pipelined())] == [int(address.rpartition(":")[2])]
