"""Kafka's key and trust stores read into what Python's ssl module loads: PEM text.

Types as Kafka's DefaultSslEngineFactory knows them:
- PEM: `ssl.keystore.location` a file holding the private key and the certificate chain, or inline
  `ssl.keystore.key` + `ssl.keystore.certificate.chain`; trust store: a file of certificates or inline
  `ssl.truststore.certificates`. An encrypted key (PKCS#8) is opened with `ssl.key.password`.
- PKCS12: read with `cryptography` (key password: `ssl.key.password`, else `ssl.keystore.password`).
- JKS: Kafka's default type. A file that is really PKCS12 (keytool's default since Java 9) is read as
  such; a true JKS file (magic 0xFEEDFEED) is refused with the keytool command that converts it: no
  maintained Python library reads JKS.
"""

from dataclasses import dataclass

JKS_MAGIC = b"\xfe\xed\xfe\xed"


class KeystoreError(Exception):
    """A store that cannot be read: start-up stops with this message (it names the key)."""


@dataclass(frozen=True)
class KeyMaterial:
    key_pem: bytes  # unencrypted PKCS#8 PEM (kept in memory only; written to a private temp file to load)
    chain_pem: bytes  # the certificate chain, leaf first


def _read(path: str, key: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise KeystoreError(f"Invalid value {path} for configuration {key}: {exc.strerror}") from None


def _store_type(declared: str, data: bytes, key: str, path: str) -> str:
    declared = declared.upper()
    if declared == "JKS" or declared == "PKCS12":
        if data.startswith(JKS_MAGIC):
            raise KeystoreError(
                f"Invalid value {path} for configuration {key}: a JKS store, which fauxka cannot read (no maintained "
                f"Python library reads JKS). Convert it: keytool -importkeystore -srckeystore {path} "
                f"-destkeystore {path}.p12 -deststoretype PKCS12, then set {key.rsplit('.', 1)[0]}.type=PKCS12")
        if data.lstrip().startswith(b"-----BEGIN"):
            return "PEM"
        return "PKCS12"
    if declared == "PEM":
        return "PEM"
    raise KeystoreError(f"Invalid value {declared} for configuration {key.rsplit('.', 1)[0]}.type: "
                        "expected PEM, PKCS12 or JKS")


def _pem_key(key_pem: bytes, password: str | None, key: str) -> bytes:
    from cryptography.hazmat.primitives import serialization

    try:
        private = serialization.load_pem_private_key(key_pem, password.encode() if password else None)
    except (ValueError, TypeError) as exc:
        raise KeystoreError(f"Invalid private key in configuration {key}: {exc}") from None
    return private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())


def _pkcs12(data: bytes, password: str | None, key: str):
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        return pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except (ValueError, TypeError) as exc:
        raise KeystoreError(f"Failed to load PKCS12 store of configuration {key}: {exc} (check "
                            f"{key.rsplit('.', 1)[0]}.password)") from None


def _pem(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def load_keystore(get) -> KeyMaterial | None:
    """The key store from `get(key) -> str | None` (a listener's ssl.* values), or None if none is set."""
    store_type = (get("ssl.keystore.type") or "JKS")
    inline_key, inline_chain = get("ssl.keystore.key"), get("ssl.keystore.certificate.chain")
    location = get("ssl.keystore.location")
    if inline_key or inline_chain:
        if store_type.upper() != "PEM":
            raise KeystoreError("ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type=PEM")
        if not (inline_key and inline_chain):
            raise KeystoreError("ssl.keystore.key and ssl.keystore.certificate.chain must be set together")
        if location:
            raise KeystoreError("ssl.keystore.location must not be set with ssl.keystore.key")
        return KeyMaterial(_pem_key(inline_key.encode(), get("ssl.key.password"), "ssl.keystore.key"),
                           inline_chain.encode())
    if not location:
        return None
    data = _read(location, "ssl.keystore.location")
    kind = _store_type(store_type, data, "ssl.keystore.location", location)
    if kind == "PEM":
        if b"PRIVATE KEY-----" not in data:
            raise KeystoreError(f"Invalid value {location} for configuration ssl.keystore.location: no private key "
                                "in the PEM file")
        key_pem = _extract(data, b"PRIVATE KEY")
        chain = _extract_all(data, b"CERTIFICATE")
        return KeyMaterial(_pem_key(key_pem, get("ssl.key.password"), "ssl.keystore.location"), chain)
    private, leaf, extra = _pkcs12(data, get("ssl.key.password") or get("ssl.keystore.password"),
                                   "ssl.keystore.location")
    if private is None or leaf is None:
        raise KeystoreError(f"Invalid value {location} for configuration ssl.keystore.location: the PKCS12 store "
                            "holds no private key entry")
    from cryptography.hazmat.primitives import serialization

    key_pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    return KeyMaterial(key_pem, _pem(leaf) + b"".join(_pem(c) for c in extra or ()))


def _extract(data: bytes, label: bytes) -> bytes:
    """The first PEM block whose label ends with `label` (PRIVATE KEY, ENCRYPTED PRIVATE KEY, RSA PRIVATE KEY)."""
    end = data.index(b"-----END ", data.index(label + b"-----"))
    begin = data.rindex(b"-----BEGIN ", 0, end)
    return data[begin:data.index(b"-----", end + 9) + 5] + b"\n"


def _extract_all(data: bytes, label: bytes) -> bytes:
    out, pos = [], 0
    begin_marker = b"-----BEGIN " + label + b"-----"
    end_marker = b"-----END " + label + b"-----"
    while (begin := data.find(begin_marker, pos)) >= 0:
        end = data.index(end_marker, begin) + len(end_marker)
        out.append(data[begin:end] + b"\n")
        pos = end
    return b"".join(out)


def load_truststore(get) -> bytes | None:
    """The trusted certificates as PEM text, or None if no trust store is set."""
    inline, location = get("ssl.truststore.certificates"), get("ssl.truststore.location")
    store_type = get("ssl.truststore.type") or "JKS"
    if inline:
        if store_type.upper() != "PEM":
            raise KeystoreError("ssl.truststore.certificates needs ssl.truststore.type=PEM")
        return inline.encode()
    if not location:
        return None
    data = _read(location, "ssl.truststore.location")
    if _store_type(store_type, data, "ssl.truststore.location", location) == "PEM":
        certs = _extract_all(data, b"CERTIFICATE")
        if not certs:
            raise KeystoreError(f"Invalid value {location} for configuration ssl.truststore.location: no certificate")
        return certs
    _, leaf, extra = _pkcs12(data, get("ssl.truststore.password"), "ssl.truststore.location")
    certs = ([leaf] if leaf is not None else []) + list(extra or ())
    if not certs:
        raise KeystoreError(f"Invalid value {location} for configuration ssl.truststore.location: no certificate")
    return b"".join(_pem(c) for c in certs)
