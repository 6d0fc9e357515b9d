"""The TLS settings of a broker's SSL and SASL_SSL listeners and of its own outgoing connections, read
from Kafka's `ssl.*` keys (each may be prefixed `listener.name.<listener>.` for one listener, listener
in lower case) and checked at start-up.

- key store / trust store: fauxka/broker/tls/keystores.py (PEM, PKCS12, JKS through keytool);
- `ssl.client.auth` none / requested / required. As in Kafka since 2.8 (KIP-684), a SASL_SSL listener
  honours only its listener-prefixed `ssl.client.auth` (default none);
- `ssl.enabled.protocols` (TLSv1.2,TLSv1.3) bounds the versions; `ssl.cipher.suites` takes Kafka's
  (IANA) names or OpenSSL's; TLS 1.3 suites cannot be restricted from Python and are always enabled;
- `ssl.principal.mapping.rules`: fauxka/model/ssl_principal.py;
- `ssl.endpoint.identification.algorithm` (https: the peer's host name is checked against its
  certificate; empty: not) for the broker's connections to other brokers, which present this broker's
  key store as their client certificate and trust the inter-broker listener's trust store.
"""

import os
import ssl
import tempfile
from dataclasses import dataclass, field

import structlog

from fauxka.model.broker_keys import BROKER_CONFIGS
from fauxka.model.ssl_principal import InvalidRule, Rule, parse_rules

from .ciphers import openssl_cipher_list
from .client_ca import name_trusted_cas
from .keystores import KeyMaterial, KeystoreError, load_keystore, load_truststore

TLS_PROTOCOLS = ("SSL", "SASL_SSL")
CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
VERSIONS = {"TLSv1": ssl.TLSVersion.TLSv1, "TLSv1.1": ssl.TLSVersion.TLSv1_1,
            "TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


class TlsConfigError(Exception):
    pass


@dataclass
class ListenerTls:
    listener: str
    context: ssl.SSLContext  # server side
    client_auth: str
    rules: list[Rule] = field(default_factory=list)


@dataclass
class TlsSettings:
    listeners: dict[str, ListenerTls]  # SSL and SASL_SSL listeners by name
    inter_broker: ssl.SSLContext | None  # client side, when the inter-broker listener uses TLS
    handshake_timeout_s: float = 10.0


def listener_getter(originals: dict[str, str], listener: str | None):
    """get(key) -> the listener-prefixed value, else the plain key's, else the catalogue default (text)."""
    def get(key: str) -> str | None:
        if listener is not None:
            prefixed = f"listener.name.{listener.lower()}.{key}"
            if prefixed in originals:
                return originals[prefixed].strip()
        if key in originals:
            return originals[key].strip()
        default = BROKER_CONFIGS[key].default if key in BROKER_CONFIGS else None
        return ",".join(default) if isinstance(default, list) else default
    return get


def _load_key(ctx: ssl.SSLContext, material: KeyMaterial) -> None:
    """ssl only loads keys from files: a private (0700) directory, removed at once."""
    if _sha1_signed(material.chain_pem):
        _accept_sha1_certificates(ctx)
    with tempfile.TemporaryDirectory(prefix="fauxka-tls-") as tmp:
        path = os.path.join(tmp, "key.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(material.key_pem + material.chain_pem)
        try:
            ctx.load_cert_chain(path)
        except ssl.SSLError as exc:
            raise TlsConfigError(f"the key store's key and certificate chain do not load: {exc}") from None


def _sha1_signed(pem: bytes) -> bool:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    return any(isinstance(c.signature_hash_algorithm, hashes.SHA1) for c in x509.load_pem_x509_certificates(pem))


def _accept_sha1_certificates(ctx: ssl.SSLContext) -> None:
    """Java, so Kafka, takes certificates signed with SHA-1 under the user's own CA (its
    jdk.certpath.disabledAlgorithms refuses SHA-1 only under the JDK's bundled CAs); OpenSSL refuses
    them from security level 1 on (CA_MD_TOO_WEAK). A context whose key or trust store holds one (as
    kafkajs's test stores do) runs at level 0, keeping its cipher list; every other stays at the default."""
    names = ":".join(c["name"] for c in ctx.get_ciphers() if not c["name"].startswith("TLS_"))
    ctx.set_ciphers(f"{names}:@SECLEVEL=0")


def _common(ctx: ssl.SSLContext, get) -> None:
    names = [p.strip() for p in (get("ssl.enabled.protocols") or "").split(",") if p.strip()]
    unknown = [p for p in names if p not in VERSIONS]
    if not names or unknown:
        raise TlsConfigError(f"Invalid value {get('ssl.enabled.protocols')} for configuration ssl.enabled.protocols: "
                             f"expected some of {', '.join(VERSIONS)}")
    versions = sorted(VERSIONS[p] for p in names)
    ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]
    suites = [s.strip() for s in (get("ssl.cipher.suites") or "").split(",") if s.strip()]
    cipher_list = openssl_cipher_list(suites)
    if cipher_list:
        try:
            ctx.set_ciphers(cipher_list)
        except ssl.SSLError:
            raise TlsConfigError(f"Invalid value {','.join(suites)} for configuration ssl.cipher.suites: no cipher "
                                 "suite is known to this OpenSSL") from None


def _trust(ctx: ssl.SSLContext, get, purpose: ssl.Purpose) -> None:
    trusted = load_truststore(get)
    if trusted is None:
        ctx.load_default_certs(purpose)  # Kafka: the JVM's default trust store
        return
    if _sha1_signed(trusted):
        _accept_sha1_certificates(ctx)
    try:
        ctx.load_verify_locations(cadata=trusted.decode("ascii"))
    except (ssl.SSLError, ValueError) as exc:
        raise TlsConfigError(f"the trust store's certificates do not load: {exc}") from None


def server_context(get, client_auth: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _common(ctx, get)
    material = load_keystore(get)
    if material is None:
        raise TlsConfigError("a TLS listener needs a key store: set ssl.keystore.location (PEM or PKCS12) or "
                             "ssl.keystore.key and ssl.keystore.certificate.chain")
    _load_key(ctx, material)
    ctx.verify_mode = CLIENT_AUTH[client_auth]
    if client_auth != "none":
        _trust(ctx, get, ssl.Purpose.CLIENT_AUTH)
        why_not = name_trusted_cas(ctx)  # the CertificateRequest names them, as Kafka's JSSE does
        if why_not is not None:
            structlog.get_logger(__name__).warning("client certificate requests name no CA", reason=why_not)
    return ctx


def client_context(get) -> ssl.SSLContext:
    """The broker's own connections to a TLS listener of another broker."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _common(ctx, get)
    ctx.check_hostname = (get("ssl.endpoint.identification.algorithm") or "").lower() == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED
    _trust(ctx, get, ssl.Purpose.SERVER_AUTH)
    material = load_keystore(get)
    if material is not None:
        _load_key(ctx, material)
    return ctx


def _client_auth(originals: dict[str, str], listener: str, protocol: str) -> str:
    prefixed = f"listener.name.{listener.lower()}.ssl.client.auth"
    if protocol == "SASL_SSL":
        value = originals.get(prefixed, "none")
    else:
        value = originals.get(prefixed, originals.get("ssl.client.auth", "none"))
    value = value.strip().lower()
    if value not in CLIENT_AUTH:
        raise TlsConfigError(f"Invalid value {value} for configuration ssl.client.auth: String must be one of: "
                             "required, requested, none")
    return value


def listener_tls(originals: dict[str, str], listener: str, protocol: str) -> ListenerTls:
    """One SSL / SASL_SSL listener's settings from `originals` (static keys, and dynamic ones merged in)."""
    get = listener_getter(originals, listener)
    auth = _client_auth(originals, listener, protocol)
    try:
        rules = parse_rules(get("ssl.principal.mapping.rules"))
    except InvalidRule as exc:
        raise TlsConfigError(f"Invalid value for configuration ssl.principal.mapping.rules: {exc}") from None
    try:
        return ListenerTls(listener, server_context(get, auth), auth, rules)
    except KeystoreError as exc:
        raise TlsConfigError(str(exc)) from None


def inter_broker_context(originals: dict[str, str], listener: str, protocol: str | None) -> ssl.SSLContext | None:
    if protocol not in TLS_PROTOCOLS:
        return None
    try:
        return client_context(listener_getter(originals, listener))
    except KeystoreError as exc:
        raise TlsConfigError(str(exc)) from None


def load(config) -> TlsSettings:
    """The TLS settings of `config` (a BrokerConfig); TlsConfigError names what is wrong."""
    listeners = {ep.listener: listener_tls(config.originals, ep.listener, ep.security_protocol)
                 for ep in config.listeners if ep.security_protocol in TLS_PROTOCOLS}
    inter = config.inter_broker_listener
    client = inter_broker_context(config.originals, inter, config.protocol_map.get(inter))
    return TlsSettings(listeners, client, config["fauxka.ssl.handshake.timeout.ms"] / 1000)
