"""JKS stores for tests, made with the JRE's keytool (as a Kafka user makes them), and kafkajs's own
(tests/fixtures/kafkajs, see its README)."""

import subprocess
from pathlib import Path

KAFKAJS = Path(__file__).resolve().parent / "fixtures" / "kafkajs"
KAFKAJS_PASSWORD = (KAFKAJS / "keystore_creds").read_text().strip()


def keytool(*args: str) -> None:
    done = subprocess.run(["keytool", *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"keytool {args[0]} failed: {done.stdout}{done.stderr}")


def key_store_from_p12(p12: Path, p12_password: str, alias: str, out: Path, store_password: str,
                       key_password: str) -> Path:
    """A true JKS key store holding the PKCS12 file's key entry `alias`, its key under its own password."""
    keytool("-importkeystore", "-noprompt", "-srckeystore", str(p12), "-srcstoretype", "PKCS12",
            "-srcstorepass", p12_password, "-srcalias", alias, "-destkeystore", str(out),
            "-deststoretype", "JKS", "-deststorepass", store_password, "-destkeypass", key_password)
    assert out.read_bytes()[:4] == b"\xfe\xed\xfe\xed"
    return out


def trust_store(ca_pem: Path, out: Path, password: str) -> Path:
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(ca_pem), "-keystore", str(out),
            "-storetype", "JKS", "-storepass", password)
    return out


def kafkajs_ca(out: Path) -> Path:
    """kafkajs's CA certificate (PEM), exported from its trust store."""
    keytool("-exportcert", "-rfc", "-alias", "caroot", "-keystore", str(KAFKAJS / "kafka.server.truststore.jks"),
            "-storepass", KAFKAJS_PASSWORD, "-file", str(out))
    return out


def kafkajs_key_p12(out: Path, password: str) -> Path:
    """kafkajs's broker key and certificate (CN=kafkajs, signed by its CA) as PKCS12, for a client to present."""
    keytool("-importkeystore", "-noprompt", "-srckeystore", str(KAFKAJS / "kafka.server.keystore.jks"),
            "-srcstoretype", "JKS", "-srcstorepass", KAFKAJS_PASSWORD, "-srcalias", "localhost",
            "-srckeypass", KAFKAJS_PASSWORD, "-destkeystore", str(out), "-deststoretype", "PKCS12",
            "-deststorepass", password)
    return out


def kafkajs_overrides(prefix: str = "") -> dict[str, str]:
    """A listener's key and trust stores as kafkajs's brokers have them (cp-kafka's KAFKA_SSL_* settings)."""
    return {f"{prefix}ssl.keystore.location": str(KAFKAJS / "kafka.server.keystore.jks"),
            f"{prefix}ssl.keystore.password": KAFKAJS_PASSWORD,
            f"{prefix}ssl.key.password": (KAFKAJS / "sslkey_creds").read_text().strip(),
            f"{prefix}ssl.truststore.location": str(KAFKAJS / "kafka.server.truststore.jks"),
            f"{prefix}ssl.truststore.password": (KAFKAJS / "truststore_creds").read_text().strip()}
