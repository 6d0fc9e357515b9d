"""Kafka's key and trust stores read into what Python's ssl module loads: PEM text.

Types as Kafka's DefaultSslEngineFactory knows them:
- PEM: `ssl.keystore.location` a file holding the private key and the certificate chain, or inline
  `ssl.keystore.key` + `ssl.keystore.certificate.chain`; trust store: a file of certificates or inline
  `ssl.truststore.certificates`. An encrypted key (PKCS#8) is opened with `ssl.key.password`.
- PKCS12: read with `cryptography` (key password: `ssl.key.password`, else `ssl.keystore.password`).
- JKS: Kafka's default type. A true JKS file (magic 0xFEEDFEED) is read by the JRE's keytool
  (fauxka/broker/tls/jks.py) with `ssl.keystore.password` and the key with `ssl.key.password` (else the
  store's password); a trust store's password may be left out, as in Kafka. As Java's key stores do
  (keystore.type.compat), a JKS file declared PKCS12 and a PKCS12 file declared JKS are both read.
"""

from dataclasses import dataclass

from . import jks

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
            return "JKS"
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
    if kind == "JKS":
        data, password = _jks_key_entry(location, get)
    else:
        password = get("ssl.key.password") or get("ssl.keystore.password")
    private, leaf, extra = _pkcs12(data, password, "ssl.keystore.location")
    if private is None or leaf is None:
        raise KeystoreError(f"Invalid value {location} for configuration ssl.keystore.location: the PKCS12 store "
                            "holds no private key entry")
    from cryptography.hazmat.primitives import serialization

    key_pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    return KeyMaterial(key_pem, _pem(leaf) + b"".join(_pem(c) for c in extra or ()))


def _jks_failure(location: str, what: str, exc) -> KeystoreError:
    return KeystoreError(f"Failed to load SSL {what} {location} of type JKS (configuration "
                         f"ssl.{what}.location): {exc}")


def _jks_key_entry(location: str, get) -> tuple[bytes, str]:
    """The JKS key store's first key entry (keytool's order) as PKCS12 bytes and their password. As in
    Kafka, the store's password is required and the key's defaults to it."""
    store_password = get("ssl.keystore.password")
    if store_password is None:
        raise KeystoreError(f"SSL key store {location} is specified, but key store password is not specified "
                            "(ssl.keystore.password)")
    try:
        keys = [e for e in jks.entries(location, store_password) if e.kind == "PrivateKeyEntry"]
    except jks.JksError as exc:
        raise _jks_failure(location, "keystore", exc) from None
    if not keys:
        raise KeystoreError(f"Invalid value {location} for configuration ssl.keystore.location: the JKS store "
                            "holds no private key entry")
    key_password = get("ssl.key.password") or store_password
    try:
        data, transfer = jks.private_key_pkcs12(location, store_password, key_password, keys[0].alias)
    except jks.JksError as exc:
        raise _jks_failure(location, "keystore", f"the key entry {keys[0].alias!r} does not open with "
                           f"ssl.key.password (else ssl.keystore.password): {exc}") from None
    return data, transfer.decode()


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
    kind = _store_type(store_type, data, "ssl.truststore.location", location)
    if kind == "PEM":
        certs = _extract_all(data, b"CERTIFICATE")
        if not certs:
            raise KeystoreError(f"Invalid value {location} for configuration ssl.truststore.location: no certificate")
        return certs
    if kind == "JKS":
        return _jks_trusted(location, get("ssl.truststore.password"))
    _, leaf, extra = _pkcs12(data, get("ssl.truststore.password"), "ssl.truststore.location")
    certs = ([leaf] if leaf is not None else []) + list(extra or ())
    if not certs:
        raise KeystoreError(f"Invalid value {location} for configuration ssl.truststore.location: no certificate")
    return b"".join(_pem(c) for c in certs)


def _jks_trusted(location: str, password: str | None) -> bytes:
    """What Java's trust manager trusts in a store: every trusted certificate entry and the first
    certificate of every key entry (sun.security.validator.TrustStoreUtil)."""
    try:
        found = jks.entries(location, password)
    except jks.JksError as exc:
        raise _jks_failure(location, "truststore", exc) from None
    certs = [e.certificates[0] for e in found
             if e.certificates and e.kind in ("trustedCertEntry", "PrivateKeyEntry")]
    if not certs:
        raise KeystoreError(f"Invalid value {location} for configuration ssl.truststore.location: no certificate")
    return b"".join(certs)
