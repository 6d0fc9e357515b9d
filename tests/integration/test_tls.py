"""SSL and SASL_SSL listeners with real clients (confluent-kafka, kafka-python, aiokafka), client
certificates and their principals, forwarding between brokers over TLS, and what a broker does with
a wrong certificate, a plaintext client and a cut handshake: it closes the connection with a log line."""

import asyncio
import json
import socket
import ssl
import time

import pytest

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import request_schema
from fauxka import certs
from tests.admin_helpers import unique
from tests.harness import Cluster, wait_for

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
LISTENERS = {"SSL": "SSL", "MTLS": "SSL", "SECURE": "SASL_SSL"}
METADATA = build(request_schema(3, 9), {"topics": None, "allow_auto_topic_creation": False,
                                        "include_cluster_authorized_operations": False,
                                        "include_topic_authorized_operations": False})


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    return certs.generate(tmp_path_factory.mktemp("tls-material"))


@pytest.fixture(scope="module")
def tls_cluster(zookeeper, tmp_path_factory, tls_files):
    overrides = {
        **certs.broker_overrides(tls_files),
        "ssl.client.auth": "requested",  # SSL: with or without a client certificate
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.principal.mapping.rules": "RULE:^CN=([^,]*),OU=clients,.*$/$1/U,DEFAULT",
        "listener.name.secure.ssl.client.auth": "requested",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.secure.plain.sasl.jaas.config": f'{PLAIN} required user_alice="alice-secret";',
        "inter.broker.listener.name": "MTLS",  # forwarding over TLS with the brokers' certificates
        "advertised.controller": "self",  # clients send admin writes anywhere: non-controllers forward
        "fauxka.ssl.handshake.timeout.ms": "1500",
    }
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("tls-cluster"), 2, overrides, LISTENERS)
    cluster.start()
    yield cluster
    cluster.stop()


def confluent(cluster, listener, broker_id=None, **extra):
    from confluent_kafka.admin import AdminClient
    bootstrap = cluster.listener_address(broker_id, listener) if broker_id else cluster.listener_bootstrap(listener)
    return AdminClient({"bootstrap.servers": bootstrap, **extra})


def ssl_settings(files, with_cert: bool) -> dict:
    settings = {"security.protocol": "SSL", "ssl.ca.location": str(files.ca)}
    if with_cert:
        settings |= {"ssl.certificate.location": str(files.client_cert), "ssl.key.location": str(files.client_key)}
    return settings


def create_and_list(admin, topic: str) -> None:
    from confluent_kafka.admin import NewTopic
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(20)
    assert topic in wait_for(lambda: admin.list_topics(timeout=10).topics, 10, what="topic listed")


def audited_principal(cluster, topic: str) -> str:
    events = wait_for(lambda: [e for e in cluster.audit_events() if e.get("resource_name") == topic], 10,
                      what=f"audit of {topic}")
    return events[0]["principal"]


def non_controller(cluster) -> int:
    controller = cluster.controller_id()
    return next(i for i in cluster.brokers if i != controller)


@pytest.mark.parametrize("with_cert", [False, True], ids=["no-client-cert", "client-cert"])
def test_confluent_kafka_over_ssl(tls_cluster, tls_files, with_cert):
    topic = unique("ssl")
    admin = confluent(tls_cluster, "SSL", non_controller(tls_cluster), **ssl_settings(tls_files, with_cert))
    create_and_list(admin, topic)
    expected = "User:CN=client,OU=clients,O=fauxka" if with_cert else "User:ANONYMOUS"
    assert audited_principal(tls_cluster, topic) == expected  # forwarded over MTLS with the client's principal


def test_required_client_certificate_and_mapping_rules(tls_cluster, tls_files):
    topic = unique("mtls")
    create_and_list(confluent(tls_cluster, "MTLS", non_controller(tls_cluster), **ssl_settings(tls_files, True)), topic)
    assert audited_principal(tls_cluster, topic) == "User:CLIENT"  # RULE:...$1/U


@pytest.mark.parametrize("with_cert", [False, True], ids=["no-client-cert", "client-cert"])
def test_confluent_kafka_over_sasl_ssl(tls_cluster, tls_files, with_cert):
    topic = unique("sasl-ssl")
    settings = {**ssl_settings(tls_files, with_cert), "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                "sasl.username": "alice", "sasl.password": "alice-secret"}
    create_and_list(confluent(tls_cluster, "SECURE", non_controller(tls_cluster), **settings), topic)
    assert audited_principal(tls_cluster, topic) == "User:alice"  # SASL_SSL: the SASL principal


@pytest.mark.parametrize("protocol,listener", [("SSL", "MTLS"), ("SASL_SSL", "SECURE"), ("SSL", "SSL")])
def test_kafka_python(tls_cluster, tls_files, protocol, listener):
    from kafka.admin import KafkaAdminClient, NewTopic

    options = dict(bootstrap_servers=tls_cluster.listener_bootstrap(listener), security_protocol=protocol,
                   ssl_cafile=str(tls_files.ca), request_timeout_ms=15000)
    if listener != "SSL":
        options |= dict(ssl_certfile=str(tls_files.client_cert), ssl_keyfile=str(tls_files.client_key))
    if protocol == "SASL_SSL":
        options |= dict(sasl_mechanism="PLAIN", sasl_plain_username="alice", sasl_plain_password="alice-secret")
    admin = KafkaAdminClient(**options)
    try:
        topic = unique("kp")
        admin.create_topics([NewTopic(topic, 1, 1)])
        assert topic in wait_for(lambda: admin.list_topics(), 10, what="topic listed")
        assert sorted(b["broker_id"] for b in admin.describe_cluster()["brokers"]) == [1, 2]
    finally:
        admin.close()


@pytest.mark.parametrize("protocol,listener", [("SSL", "MTLS"), ("SASL_SSL", "SECURE"), ("SSL", "SSL")])
def test_aiokafka(tls_cluster, tls_files, protocol, listener):
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.helpers import create_ssl_context

    async def run():
        context = create_ssl_context(cafile=str(tls_files.ca), **(
            {"certfile": str(tls_files.client_cert), "keyfile": str(tls_files.client_key)} if listener != "SSL" else {}))
        options = dict(bootstrap_servers=tls_cluster.listener_bootstrap(listener), security_protocol=protocol,
                       ssl_context=context, request_timeout_ms=15000)
        if protocol == "SASL_SSL":
            options |= dict(sasl_mechanism="PLAIN", sasl_plain_username="alice", sasl_plain_password="alice-secret")
        admin = AIOKafkaAdminClient(**options)
        await admin.start()
        try:
            topic = unique("aio")
            await admin.create_topics([NewTopic(topic, 1, 1)])
            for _ in range(100):
                if topic in await admin.list_topics():
                    return
                await asyncio.sleep(0.1)
            raise AssertionError(f"{topic} not listed")
        finally:
            await admin.close()

    asyncio.run(run())


def log_lines(cluster, broker_id: int, fragment: str) -> list[dict]:
    lines = cluster.brokers[broker_id].log_file.read_text().splitlines()
    return [json.loads(line) for line in lines if fragment in line]


def closing_lines(cluster, broker_id: int, reason_fragment: str) -> list[dict]:
    return [e for e in log_lines(cluster, broker_id, "closing connection") if reason_fragment in e.get("reason", "")]


def port(cluster, listener: str, broker_id: int = 1) -> int:
    return cluster.brokers[broker_id].listener_ports[listener]


def still_serves(cluster, files) -> None:
    context = ssl.create_default_context(cafile=str(files.ca))

    async def ask():
        conn = await KafkaConnection.open("127.0.0.1", port(cluster, "SSL"), 10, ssl=context)
        try:
            return await conn.send(METADATA, 10)
        finally:
            await conn.close()
    assert len(asyncio.run(ask()).brokers) == 2


def test_wrong_certificate_is_a_closed_connection_and_a_log_line(tls_cluster, tls_files, tmp_path):
    rogue_ca = certs.make_ca("rogue CA")
    key, cert = certs.issue(rogue_ca, "mallory", "clients")
    (tmp_path / "m.pem").write_bytes(certs.cert_pem(cert))
    (tmp_path / "m.key").write_bytes(certs.key_pem(key))
    context = ssl.create_default_context(cafile=str(tls_files.ca))
    context.load_cert_chain(tmp_path / "m.pem", tmp_path / "m.key")
    before = len(closing_lines(tls_cluster, 1, "TLS handshake failed"))

    async def attempt():
        try:
            conn = await KafkaConnection.open("127.0.0.1", port(tls_cluster, "MTLS"), 10, ssl=context)
            await conn.send(METADATA, 10)  # TLS 1.3: the server refuses the certificate after the client's Finished
        except (ssl.SSLError, ConnectionError, OSError, EOFError, asyncio.IncompleteReadError) as exc:
            return exc
        except Exception as exc:  # the codec's "connection closed before the response"
            return exc
        return None

    assert asyncio.run(attempt()) is not None
    lines = wait_for(lambda: closing_lines(tls_cluster, 1, "TLS handshake failed")[before:], 5, what="log line")
    assert "CERTIFICATE" in lines[0]["reason"].upper()
    assert lines[0]["listener"] == "MTLS"
    still_serves(tls_cluster, tls_files)


def test_plaintext_client_on_a_tls_port(tls_cluster, tls_files):
    before = len(closing_lines(tls_cluster, 1, "TLS handshake failed"))

    async def attempt():
        conn = await KafkaConnection.open("127.0.0.1", port(tls_cluster, "SSL"), 10)
        try:
            await conn.send(METADATA, 10)
        except Exception as exc:
            return exc
        finally:
            await conn.close()

    assert asyncio.run(attempt()) is not None
    lines = wait_for(lambda: closing_lines(tls_cluster, 1, "TLS handshake failed")[before:], 5, what="log line")
    assert lines[0]["listener"] == "SSL"
    still_serves(tls_cluster, tls_files)


def client_hello() -> bytes:
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


@pytest.mark.parametrize("hang", [False, True], ids=["peer-closes", "peer-stalls"])
def test_handshake_cut_halfway(tls_cluster, tls_files, hang):
    hello = client_hello()
    fragment = "TLS handshake not finished" if hang else "TLS handshake failed"
    before = len(closing_lines(tls_cluster, 1, fragment))
    with socket.create_connection(("127.0.0.1", port(tls_cluster, "SSL")), 5) as sock:
        sock.sendall(hello[: len(hello) // 2])
        if hang:  # the broker gives up after fauxka.ssl.handshake.timeout.ms (1.5 s here) and closes
            sock.settimeout(5)
            started = time.monotonic()
            assert sock.recv(1) == b""
            assert time.monotonic() - started < 4
    lines = wait_for(lambda: closing_lines(tls_cluster, 1, fragment)[before:], 5, what="log line")
    assert lines[0]["listener"] == "SSL"
    still_serves(tls_cluster, tls_files)


def material_for_host(tmp_path, host: str, ca) -> dict:
    """Broker key store issued by `ca` for `host` only (PEM), the CA as trust store."""
    key, cert = certs.issue(ca, "broker", "brokers", (host,))
    (tmp_path / f"{host}.pem").write_bytes(certs.key_pem(key) + certs.cert_pem(cert))
    (tmp_path / "ca.pem").write_bytes(certs.cert_pem(ca[1]))
    return {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(tmp_path / f"{host}.pem"),
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(tmp_path / "ca.pem")}


def create_at_non_controller(cluster) -> int:
    from tests.admin_helpers import create_topics, topic_spec
    controller = cluster.controller_id()
    other = next(i for i in cluster.brokers if i != controller)
    return create_topics(cluster.address_of(other), [topic_spec(unique("fwd"), 1, 1)], timeout_ms=5000)[0].error_code


def test_forwarding_over_sasl_ssl_without_host_name_checks(make_cluster, tmp_path):
    """Inter-broker SASL_SSL; the certificate names another host, which is fine with
    ssl.endpoint.identification.algorithm empty."""
    overrides = {**material_for_host(tmp_path, "elsewhere.example", certs.make_ca()),
                 "ssl.endpoint.identification.algorithm": "", "inter.broker.listener.name": "SECURE",
                 "sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.inter.broker.protocol": "PLAIN",
                 "listener.name.secure.plain.sasl.jaas.config":
                     f'{PLAIN} required username="broker" password="b" user_broker="b";'}
    cluster = make_cluster(2, overrides, extra_listeners={"SECURE": "SASL_SSL"})
    assert create_at_non_controller(cluster) == 0


def test_host_name_checked_between_brokers(make_cluster, tmp_path):
    """ssl.endpoint.identification.algorithm=https (the default): a broker whose certificate does not
    name its advertised host is refused by the others; forwarding to it fails with a log line."""
    overrides = {**material_for_host(tmp_path, "elsewhere.example", certs.make_ca()),
                 "inter.broker.listener.name": "SSL", "request.timeout.ms": "2000"}
    cluster = make_cluster(2, overrides, extra_listeners={"SSL": "SSL"})
    assert create_at_non_controller(cluster) == 7  # REQUEST_TIMED_OUT: no channel to the controller
    other = next(i for i in cluster.brokers if i != cluster.controller_id())
    lines = log_lines(cluster, other, "no connection to the controller")
    assert lines and "CERTIFICATE_VERIFY_FAILED" in lines[0]["error"]
