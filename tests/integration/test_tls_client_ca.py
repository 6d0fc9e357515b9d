"""A TLS listener that requires client certificates answers as Kafka's JSSE does: its CertificateRequest
names the CAs of its trust store (fauxka/broker/tls/client_ca.py), so librdkafka sends no certificate
from another CA, and a client that sends none is refused with bad_certificate (alert 42) over TLS 1.2
(fauxka/broker/tls/stream.py). librdkafka's 0097 checks both; here openssl's s_client, confluent-kafka
and Python's ssl client meet one broker whose listener takes TLS 1.2 only, as trivup's ssl scenario."""

import socket
import ssl
import subprocess

import pytest
from confluent_kafka.admin import AdminClient

from fauxka import certs
from tests.harness import Cluster


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    return certs.generate(tmp_path_factory.mktemp("tls-ca-material"))


@pytest.fixture(scope="module")
def mtls(zookeeper, tmp_path_factory, tls_files):
    overrides = {**certs.broker_overrides(tls_files), "ssl.client.auth": "required",
                 "ssl.enabled.protocols": "TLSv1.2"}
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("tls-ca-cluster"), 1, overrides, {"SSL": "SSL"})
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def rogue(tmp_path_factory):
    """A client key and certificate from a CA the broker does not trust."""
    key, cert = certs.issue(certs.make_ca("rogue CA"), "mallory", "clients")
    directory = tmp_path_factory.mktemp("rogue")
    (directory / "m.pem").write_bytes(certs.cert_pem(cert))
    (directory / "m.key").write_bytes(certs.key_pem(key))
    return directory / "m.pem", directory / "m.key"


def test_the_certificate_request_names_the_trusted_cas(mtls):
    address = mtls.listener_address(1, "SSL")
    done = subprocess.run(["openssl", "s_client", "-connect", address, "-tls1_2"], input="", capture_output=True,
                          text=True, timeout=30)
    names = done.stdout.split("Acceptable client certificate CA names", 1)[1].splitlines()[1]
    assert "fauxka test CA" in names, done.stdout[-2000:]


def _errors(settings: dict) -> list[str]:
    seen: list[str] = []
    admin = AdminClient({"bootstrap.servers": settings.pop("bootstrap"), "security.protocol": "SSL",
                         "error_cb": lambda e: seen.append(str(e)), **settings})
    try:
        admin.list_topics(timeout=5)
    except Exception:  # noqa: BLE001 - the refused connection; the errors say why
        pass
    admin.poll(1)  # serves error_cb
    return seen


def test_librdkafka_sends_no_certificate_from_an_unnamed_ca_and_is_refused_with_bad_certificate(mtls, tls_files,
                                                                                                  rogue):
    cert, key = rogue
    errors = _errors({"bootstrap": mtls.listener_address(1, "SSL"), "ssl.ca.location": str(tls_files.ca),
                      "ssl.certificate.location": str(cert), "ssl.key.location": str(key)})
    assert errors and any("alert number 42" in e for e in errors), errors  # not 48, unknown_ca
    trusted = _errors({"bootstrap": mtls.listener_address(1, "SSL"), "ssl.ca.location": str(tls_files.ca),
                       "ssl.certificate.location": str(tls_files.client_cert),
                       "ssl.key.location": str(tls_files.client_key)})
    assert trusted == []


def test_no_certificate_over_tls_1_2_is_bad_certificate(mtls, tls_files):
    context = ssl.create_default_context(cafile=str(tls_files.ca))
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    host, port = mtls.listener_address(1, "SSL").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        with pytest.raises(ssl.SSLError) as refused:
            with context.wrap_socket(sock, server_hostname="localhost") as tls:
                tls.recv(1)
    assert refused.value.reason == "SSLV3_ALERT_BAD_CERTIFICATE", refused.value
