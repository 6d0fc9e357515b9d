"""True JKS key and trust stores (Kafka's default `ssl.keystore.type`) on real listeners: kafkajs's own
stores (tests/fixtures/kafkajs) on the SSL listener, client certificates required, and stores made
with keytool (the key under its own password) on the MTLS listener, which the brokers also use between
themselves. confluent-kafka and Kafka's Java client (which reads the same JKS files) talk through both."""

import pytest

from fauxka import certs
from tests import jks_stores
from tests.admin_helpers import unique
from tests.client_programs import java_command, run_scenarios, scenario
from tests.harness import Cluster

pytestmark = pytest.mark.timeout(300)

LISTENERS = {"SSL": "SSL", "MTLS": "SSL"}
STORE_PASSWORD, KEY_PASSWORD, TRUST_PASSWORD = "store-secret", "key-secret", "trust-secret"


@pytest.fixture(scope="module")
def material(tmp_path_factory):
    out = tmp_path_factory.mktemp("jks-material")
    files = certs.generate(out)
    return {
        "files": files,
        "broker_jks": jks_stores.key_store_from_p12(files.broker_p12, certs.PKCS12_PASSWORD, "broker",
                                                    out / "broker.jks", STORE_PASSWORD, KEY_PASSWORD),
        "client_jks": jks_stores.key_store_from_p12(files.client_p12, certs.PKCS12_PASSWORD, "client",
                                                    out / "client.jks", STORE_PASSWORD, STORE_PASSWORD),
        "trust_jks": jks_stores.trust_store(files.ca, out / "trust.jks", TRUST_PASSWORD),
        "kafkajs_ca": jks_stores.kafkajs_ca(out / "kafkajs-ca.pem"),
        "kafkajs_p12": jks_stores.kafkajs_key_p12(out / "kafkajs.p12", "client-secret"),
    }


@pytest.fixture(scope="module")
def jks_cluster(zookeeper, tmp_path_factory, material):
    overrides = {
        **jks_stores.kafkajs_overrides("listener.name.ssl."),
        "listener.name.ssl.ssl.client.auth": "required",
        "listener.name.mtls.ssl.keystore.location": str(material["broker_jks"]),
        "listener.name.mtls.ssl.keystore.password": STORE_PASSWORD,
        "listener.name.mtls.ssl.key.password": KEY_PASSWORD,
        "listener.name.mtls.ssl.truststore.location": str(material["trust_jks"]),
        "listener.name.mtls.ssl.truststore.password": TRUST_PASSWORD,
        "listener.name.mtls.ssl.client.auth": "required",
        "inter.broker.listener.name": "MTLS",  # the brokers' own connections present the JKS key store
    }
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("jks-cluster"), 2, overrides, LISTENERS)
    cluster.start()
    yield cluster
    cluster.stop()


def kafkajs_client(material, with_certificate: bool) -> dict:
    # kafkajs's certificate names CN=kafkajs only: its own specs do not check the host name either. It
    # is signed with SHA-1, which Java's clients accept and librdkafka's OpenSSL only at security level 0
    settings = {"security.protocol": "SSL", "ssl.ca.location": str(material["kafkajs_ca"]),
                "ssl.endpoint.identification.algorithm": "none", "ssl.cipher.suites": "DEFAULT:@SECLEVEL=0"}
    if with_certificate:
        settings |= {"ssl.keystore.location": str(material["kafkajs_p12"]), "ssl.keystore.password": "client-secret"}
    return settings


def round_trip(bootstrap: str, settings: dict, count: int = 5) -> list[str]:
    """A new topic created, `count` records produced and read back through one listener."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    topic = unique("jks")
    admin = AdminClient({"bootstrap.servers": bootstrap, **settings})
    admin.create_topics([NewTopic(topic, 1, 2)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, **settings})
    for i in range(count):
        producer.produce(topic, f"record-{i}".encode())
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("jks-group"),
                         "auto.offset.reset": "earliest", **settings})
    consumer.subscribe([topic])
    seen: list[str] = []
    try:
        for _ in range(60):
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                seen.append(message.value().decode())
            if len(seen) == count:
                break
    finally:
        consumer.close()
    return seen


def test_kafkajs_key_store_with_client_certificates(jks_cluster, material):
    bootstrap = jks_cluster.listener_bootstrap("SSL")
    assert round_trip(bootstrap, kafkajs_client(material, True)) == [f"record-{i}" for i in range(5)]


def test_kafkajs_key_store_refuses_a_client_without_a_certificate(jks_cluster, material):
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": jks_cluster.listener_bootstrap("SSL"),
                         **kafkajs_client(material, False)})
    with pytest.raises(Exception):  # the handshake fails: no broker is reached
        admin.list_topics(timeout=5)


def test_keytool_stores_with_confluent_kafka(jks_cluster, material):
    files = material["files"]
    settings = {"security.protocol": "SSL", "ssl.ca.location": str(files.ca),
                "ssl.certificate.location": str(files.client_cert), "ssl.key.location": str(files.client_key)}
    assert round_trip(jks_cluster.listener_bootstrap("MTLS"), settings) == [f"record-{i}" for i in range(5)]


def test_java_client_reads_the_same_jks_files(jks_cluster, material, tmp_path):
    """Kafka's Java client with a JKS trust store and a JKS key store made by keytool: every codec's
    records round-trip through the MTLS listener (the produce scenario of ClientScenarios.java)."""
    from confluent_kafka.admin import AdminClient, NewTopic
    topic = unique("jks-java")
    admin = AdminClient({"bootstrap.servers": jks_cluster.bootstrap})
    admin.create_topics([NewTopic(topic, 3, 2)])[topic].result(30)
    config = tmp_path / "client.properties"
    config.write_text("\n".join([
        "security.protocol=SSL",
        f"ssl.truststore.location={material['trust_jks']}", f"ssl.truststore.password={TRUST_PASSWORD}",
        f"ssl.keystore.location={material['client_jks']}", f"ssl.keystore.password={STORE_PASSWORD}",
        "ssl.keystore.type=JKS", "ssl.truststore.type=JKS"]) + "\n")
    results = run_scenarios(java_command(), jks_cluster.listener_bootstrap("MTLS"), {"produce": [topic]},
                            client_config=config)
    result = scenario(results, "produce")
    assert len(result["sent"]) == 25
    assert sorted((r["partition"], r["offset"]) for r in result["received"]) == \
        sorted((s["partition"], s["offset"]) for s in result["sent"])


def test_a_wrong_password_stops_the_broker_naming_the_file(make_cluster):
    store = jks_stores.KAFKAJS / "kafka.server.keystore.jks"
    cluster = make_cluster(1, {**jks_stores.kafkajs_overrides("listener.name.ssl."),
                               "listener.name.ssl.ssl.keystore.password": "wrong-password"},
                           start=False, extra_listeners={"SSL": "SSL"})
    with pytest.raises(RuntimeError) as exited:
        cluster.start()
    assert (f"Failed to load SSL keystore {store} of type JKS (configuration ssl.keystore.location): "
            "Keystore was tampered with, or password was incorrect") in str(exited.value)
