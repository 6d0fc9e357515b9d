"""The TLS material of librdkafka's SSL runs, laid out as trivup's SslApp makes it (trivup 0.12,
apps/SslApp.py), so test-runner and 0097 find what they look for:

- a CA, and an unused second CA; all_cas.pem holds both, the unused one first;
- the brokers' key store and trust store as JKS made with keytool, one password for store and key
  (trivup's ssl_key_pass, 12345678), as trivup's KafkaBrokerApp configures them;
- the client's key (PEM, and DER unencrypted), certificate (PEM, DER) and a PKCS#12 file (key,
  certificate, CA) under the same password, handed to the tests as SSL_* variables.
"""

import subprocess
from dataclasses import dataclass
from pathlib import Path

PASSWORD = "12345678"  # trivup's default ssl_key_pass


@dataclass(frozen=True)
class SslMaterial:
    directory: Path
    env: dict[str, str]  # SSL_* as LibrdkafkaTestApp sets them
    client_conf: list[str]  # test.conf lines
    broker_props: list[str]  # server.properties lines (every broker)


def _keytool(*args: str) -> None:
    subprocess.run(["keytool", *args], check=True, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)


def make(directory: Path) -> SslMaterial:
    from cryptography.hazmat.primitives import serialization
    from fauxka import certs

    directory.mkdir(parents=True, exist_ok=True)

    def write(name: str, data: bytes) -> str:
        (directory / name).write_bytes(data)
        return str(directory / name)

    def der(cert) -> bytes:
        return cert.public_bytes(serialization.Encoding.DER)

    ca, unused = certs.make_ca(), certs.make_ca()
    ca_pem = write("ca.pem", certs.cert_pem(ca[1]))
    env = {"SSL_ca_pem": ca_pem, "SSL_ca_der": write("ca.der", der(ca[1])),
           "SSL_unused_ca_pem": write("unused_ca.pem", certs.cert_pem(unused[1])),
           "SSL_unused_ca_der": write("unused_ca.der", der(unused[1])),
           "SSL_all_cas_pem": write("all_cas.pem", certs.cert_pem(unused[1]) + certs.cert_pem(ca[1])),
           "SSL_client_auth": "required", "SSL_password": PASSWORD}

    broker_key, broker_cert = certs.issue(ca, "broker", "brokers", ("localhost", "127.0.0.1"))
    broker_p12 = write("broker.p12", certs.p12("localhost", broker_key, broker_cert, ca[1], PASSWORD))
    keystore, truststore = directory / "broker.keystore.jks", directory / "broker.truststore.jks"
    for path in (keystore, truststore):
        path.unlink(missing_ok=True)
    _keytool("-importkeystore", "-noprompt", "-srckeystore", broker_p12, "-srcstoretype", "PKCS12",
             "-srcstorepass", PASSWORD, "-destkeystore", str(keystore), "-deststoretype", "JKS",
             "-deststorepass", PASSWORD, "-destkeypass", PASSWORD)
    _keytool("-importcert", "-noprompt", "-alias", "CARoot", "-file", ca_pem, "-keystore", str(truststore),
             "-storetype", "JKS", "-storepass", PASSWORD)

    client_key, client_cert = certs.issue(ca, "librdkafka", "clients")
    env |= {
        "SSL_priv_pem": write("client-priv.pem", certs.key_pem(client_key, PASSWORD)),
        "SSL_priv_der": write("client-priv.der", client_key.private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption())),
        "SSL_pub_pem": write("client-pub.pem", certs.cert_pem(client_cert)),
        "SSL_pub_der": write("client-pub.der", der(client_cert)),
        "SSL_pkcs": write("client.pfx", certs.p12("client", client_key, client_cert, ca[1], PASSWORD)),
    }
    client_conf = [f"ssl.ca.location={ca_pem}", f"ssl.certificate.location={env['SSL_pub_pem']}",
                   f"ssl.key.location={env['SSL_priv_pem']}", f"ssl.key.password={PASSWORD}"]
    broker_props = ["ssl.keystore.type=JKS", f"ssl.keystore.location={keystore}", f"ssl.keystore.password={PASSWORD}",
                    f"ssl.key.password={PASSWORD}", "ssl.truststore.type=JKS", f"ssl.truststore.location={truststore}",
                    f"ssl.truststore.password={PASSWORD}", "ssl.client.auth=required"]
    return SslMaterial(directory, env, client_conf, broker_props)
