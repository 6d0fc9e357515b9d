"""Throw-away TLS material for `fauxka up --tls` and the tests: a CA, a broker certificate (for
localhost / 127.0.0.1, used by every broker as server and inter-broker client certificate) and a
client certificate, as PEM files, plus a PKCS12 copy of the broker's and the client's key stores.
Keys are ECDSA P-256 (fast to make); certificates are valid for 30 days."""

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PKCS12_PASSWORD = "fauxka-secret"


@dataclass(frozen=True)
class TlsFiles:
    directory: Path
    ca: Path  # ca.pem: the CA certificate (the trust store of brokers and clients)
    broker_pem: Path  # broker.pem: key + chain (ssl.keystore.type=PEM)
    broker_p12: Path  # broker.p12 (PKCS12, password PKCS12_PASSWORD)
    client_cert: Path  # client.pem (certificate)
    client_key: Path  # client.key (private key, unencrypted)
    client_p12: Path


def _name(common_name: str, unit: str = "fauxka") -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "fauxka"),
                      x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _builder(subject: x509.Name, issuer: x509.Name, public_key, days: int) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days)))


def make_ca(common_name: str = "fauxka test CA", days: int = 30) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    name = _name(common_name)
    cert = (_builder(name, name, key.public_key(), days)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


def issue(ca: tuple, common_name: str, unit: str = "fauxka", hosts: tuple[str, ...] = (), days: int = 30,
          ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A certificate signed by `ca` (its key and certificate); `hosts` become DNS / IP subject alternative names."""
    ca_key, ca_cert = ca
    key = _key()
    builder = (_builder(_name(common_name, unit), ca_cert.subject, key.public_key(), days)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                              critical=False))
    if hosts:
        names = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return key, builder.sign(ca_key, hashes.SHA256())


def key_pem(key, password: str | None = None) -> bytes:
    encryption = (serialization.BestAvailableEncryption(password.encode()) if password
                  else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def p12(name: str, key, cert, ca_cert, password: str = PKCS12_PASSWORD) -> bytes:
    return pkcs12.serialize_key_and_certificates(name.encode(), key, cert, [ca_cert],
                                                 serialization.BestAvailableEncryption(password.encode()))


def _write(path: Path, data: bytes, private: bool = False) -> Path:
    path.write_bytes(data)
    if private:
        path.chmod(0o600)
    return path


def generate(directory: Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1")) -> TlsFiles:
    """Write a fresh CA, broker and client material under `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = make_ca()
    broker_key, broker_cert = issue(ca, "broker", "brokers", hosts)
    client_key, client_cert = issue(ca, "client", "clients")
    ca_pem = cert_pem(ca[1])
    return TlsFiles(
        directory,
        _write(directory / "ca.pem", ca_pem),
        _write(directory / "broker.pem", key_pem(broker_key) + cert_pem(broker_cert) + ca_pem, True),
        _write(directory / "broker.p12", p12("broker", broker_key, broker_cert, ca[1]), True),
        _write(directory / "client.pem", cert_pem(client_cert) + ca_pem),
        _write(directory / "client.key", key_pem(client_key), True),
        _write(directory / "client.p12", p12("client", client_key, client_cert, ca[1]), True),
    )


def broker_overrides(files: TlsFiles) -> dict[str, str]:
    """server.properties keys for PEM files from `generate`."""
    return {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(files.broker_pem),
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(files.ca)}
