"""TLS settings without sockets: Kafka's principal mapping rules, cipher names, key and trust stores of
every type, per-listener prefixes and the start-up errors."""

import ssl

import pytest

from fauxka.broker.config import ConfigError, config_from_dict
from fauxka.broker.tls.ciphers import openssl_cipher_list, openssl_name
from fauxka.broker.tls.handshake import subject_dn
from fauxka.broker.tls.keystores import load_keystore, load_truststore
from fauxka.broker.tls.settings import listener_getter
from fauxka import certs
from fauxka.model.ssl_principal import InvalidRule, NoMatchingRule, parse_rules, principal_name
from tests import jks_stores

KAFKA_RULES = ", ".join([
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
    "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
    "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
    "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
    "DEFAULT",
])


@pytest.mark.parametrize("dn,name", [  # SslPrincipalMapperTest.testSslPrincipalMapper
    ("CN=Duke,OU=ServiceUsers,O=Org,C=US", "duke"),
    ("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme"),
    ("cn=duke,ou=sme,dc=mycp,dc=com", "DUKE@SME"),
    ("cN=duke,OU=JavaSoft,O=Sun Microsystems", "DUKE"),
    ("OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US"),
])
def test_kafka_mapping_rules(dn, name):
    assert principal_name(parse_rules(KAFKA_RULES), dn) == name


def test_escaped_comma_and_empty_rules():
    rules = parse_rules(r"RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT")
    assert principal_name(rules, r"CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz") == r"Tkac\, Adam"
    assert parse_rules(",   , , ,      , , ,   ") == []
    assert len(parse_rules(",,RULE://,,,DEFAULT,,")) == 2
    with pytest.raises(NoMatchingRule):
        principal_name(parse_rules("RULE:^CN=x$/y/"), "CN=z")


@pytest.mark.parametrize("rule", ["default", "DEFAUL", "DEFAULT/L", "DEFAULT/U",
                                  "RULE:CN=(.*?),OU=ServiceUsers.*/$1", "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
                                  "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U", "RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
                                  "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU"])
def test_invalid_rules(rule):  # SslPrincipalMapperTest.testInvalidRules
    with pytest.raises(InvalidRule):
        parse_rules(rule)


def test_cipher_names():
    assert openssl_name("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256") == "ECDHE-RSA-AES128-GCM-SHA256"
    assert openssl_name("TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384") == "ECDHE-ECDSA-AES256-SHA384"
    assert openssl_name("TLS_RSA_WITH_AES_128_CBC_SHA") == "AES128-SHA"
    assert openssl_name("TLS_RSA_WITH_AES_256_GCM_SHA384") == "AES256-GCM-SHA384"
    assert openssl_name("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256") == "ECDHE-ECDSA-CHACHA20-POLY1305"
    assert openssl_name("TLS_AES_128_GCM_SHA256") is None
    assert openssl_cipher_list(["ECDHE-RSA-AES128-GCM-SHA256", "TLS_AES_256_GCM_SHA384"]) == "ECDHE-RSA-AES128-GCM-SHA256"
    known = {c["name"] for c in ssl.create_default_context().get_ciphers()}
    assert openssl_name("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256") in known


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return certs.generate(tmp_path_factory.mktemp("tls"))


def tls_config(files, **extra):
    base = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181",
            "listeners": "PLAINTEXT://:0,SSL://:0,MTLS://:0,SECURE://:0",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SECURE:SASL_SSL",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.secure.plain.sasl.jaas.config":
                'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b";',
            **certs.broker_overrides(files)}
    return config_from_dict({**base, **extra})


def test_listeners_and_prefixes(files):
    config = tls_config(files, **{"listener.name.mtls.ssl.client.auth": "required", "ssl.client.auth": "requested",
                                  "listener.name.mtls.ssl.principal.mapping.rules": "RULE:^CN=([^,]*).*$/$1/"})
    tls = config.tls
    assert set(tls.listeners) == {"SSL", "MTLS", "SECURE"}
    assert tls.listeners["SSL"].context.verify_mode == ssl.CERT_OPTIONAL
    assert tls.listeners["MTLS"].context.verify_mode == ssl.CERT_REQUIRED
    assert tls.listeners["SECURE"].context.verify_mode == ssl.CERT_NONE  # SASL_SSL: only the prefixed key (KIP-684)
    assert principal_name(tls.listeners["MTLS"].rules, "CN=client,OU=clients,O=fauxka") == "client"
    assert tls.inter_broker is None  # PLAINTEXT between brokers
    assert config.sasl.listeners["SECURE"].mechanisms == ("PLAIN",)
    inter = tls_config(files, **{"inter.broker.listener.name": "MTLS"}).tls.inter_broker
    assert inter.check_hostname and inter.verify_mode == ssl.CERT_REQUIRED
    loose = tls_config(files, **{"inter.broker.listener.name": "SSL", "ssl.endpoint.identification.algorithm": ""})
    assert not loose.tls.inter_broker.check_hostname
    narrow = tls_config(files, **{"ssl.enabled.protocols": "TLSv1.3"}).tls.listeners["SSL"].context
    assert narrow.minimum_version == ssl.TLSVersion.TLSv1_3


def test_store_types(files):
    pem = files.broker_pem.read_text()
    key = pem[:pem.index("-----BEGIN CERTIFICATE")]
    chain = pem[len(key):]
    inline = tls_config(files, **{"ssl.keystore.location": "", "ssl.keystore.key": key,
                                  "ssl.keystore.certificate.chain": chain, "ssl.truststore.location": "",
                                  "ssl.truststore.certificates": files.ca.read_text(),
                                  "inter.broker.listener.name": "SSL"})
    assert inline.tls.listeners["SSL"] and inline.tls.inter_broker
    p12 = {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(files.broker_p12),
           "ssl.keystore.password": certs.PKCS12_PASSWORD, "ssl.truststore.type": "PKCS12",
           "ssl.truststore.location": str(files.broker_p12), "ssl.truststore.password": certs.PKCS12_PASSWORD}
    assert tls_config(files, **p12, **{"ssl.client.auth": "required"}).tls.listeners["SSL"]
    with pytest.raises(ConfigError, match="Failed to load PKCS12 store of configuration ssl.keystore.location"):
        tls_config(files, **{**p12, "ssl.keystore.password": "wrong"})


def test_encrypted_pem_key(files, tmp_path):
    ca = certs.make_ca()
    key, cert = certs.issue(ca, "broker", hosts=("127.0.0.1",))
    path = tmp_path / "enc.pem"
    path.write_bytes(certs.key_pem(key, "pw") + certs.cert_pem(cert))
    assert tls_config(files, **{"ssl.keystore.location": str(path), "ssl.key.password": "pw"}).tls.listeners["SSL"]
    with pytest.raises(ConfigError, match="Invalid private key"):
        tls_config(files, **{"ssl.keystore.location": str(path), "ssl.key.password": "no"})


@pytest.mark.parametrize("extra,fragment", [
    ({"ssl.keystore.location": "/nonexistent.pem"}, "Invalid value /nonexistent.pem for configuration "
                                                   "ssl.keystore.location: No such file"),
    ({"ssl.client.auth": "sometimes"}, "Invalid value sometimes for configuration ssl.client.auth"),
    ({"ssl.enabled.protocols": "SSLv3"}, "Invalid value SSLv3 for configuration ssl.enabled.protocols"),
    ({"ssl.cipher.suites": "NOT_A_CIPHER"}, "Invalid value NOT_A_CIPHER for configuration ssl.cipher.suites"),
    ({"ssl.principal.mapping.rules": "RULE:oops"}, "ssl.principal.mapping.rules: Invalid rule: RULE:oops"),
    ({"ssl.keystore.type": "BKS"}, "Invalid value BKS for configuration ssl.keystore.type"),
    ({"ssl.keystore.key": "x", "ssl.keystore.type": "PKCS12"}, "ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type=PEM"),
])
def test_start_up_errors(files, extra, fragment):
    with pytest.raises(ConfigError) as err:
        tls_config(files, **extra)
    assert fragment in str(err.value)


@pytest.fixture(scope="module")
def keytool_jks(files, tmp_path_factory):
    """A JKS key store made with keytool whose key has its own password, and a JKS trust store."""
    out = tmp_path_factory.mktemp("jks")
    return (jks_stores.key_store_from_p12(files.broker_p12, certs.PKCS12_PASSWORD, "broker", out / "broker.jks",
                                          "store-secret", "key-secret"),
            jks_stores.trust_store(files.ca, out / "trust.jks", "trust-secret"))


def jks_settings(key_store, trust_store, **extra) -> dict:
    return {"ssl.keystore.type": "JKS", "ssl.keystore.location": str(key_store),
            "ssl.keystore.password": "store-secret", "ssl.key.password": "key-secret",
            "ssl.truststore.type": "JKS", "ssl.truststore.location": str(trust_store),
            "ssl.truststore.password": "trust-secret", "ssl.client.auth": "required", **extra}


def chain_subjects(pem: bytes) -> list[str]:
    from cryptography import x509
    return [c.subject.rfc4514_string() for c in x509.load_pem_x509_certificates(pem)]


def test_jks_stores_made_with_keytool(files, keytool_jks):
    key_store, trust_store = keytool_jks
    config = tls_config(files, **jks_settings(key_store, trust_store, **{"inter.broker.listener.name": "SSL"}))
    assert config.tls.listeners["SSL"].context.verify_mode == ssl.CERT_REQUIRED and config.tls.inter_broker
    get = listener_getter(jks_settings(key_store, trust_store), "SSL")
    assert chain_subjects(load_keystore(get).chain_pem) == chain_subjects(files.broker_pem.read_bytes())
    assert load_truststore(get) == files.ca.read_bytes().replace(b"\r", b"")
    # as in Kafka: a trust store's password may be left out (read unchecked), and a type PKCS12 opens JKS
    unchecked = jks_settings(key_store, trust_store, **{"ssl.truststore.password": "", "ssl.keystore.type": "PKCS12"})
    assert tls_config(files, **{k: v for k, v in unchecked.items() if v}).tls.listeners["SSL"]


def test_kafkajs_key_stores():
    get = listener_getter(jks_stores.kafkajs_overrides(), "SSL")
    assert chain_subjects(load_keystore(get).chain_pem) == [
        "CN=kafkajs,OU=kafkajs,O=kafkajs,L=Stockholm,ST=Unknown,C=SE", "O=KafkaJS,L=Stockholm,C=SE"]
    assert chain_subjects(load_truststore(get)) == ["O=KafkaJS,L=Stockholm,C=SE"]


@pytest.mark.parametrize("wrong,fragment", [
    ({"ssl.keystore.password": "nope"}, "Failed to load SSL keystore {key} of type JKS (configuration "
                                        "ssl.keystore.location): Keystore was tampered with, or password was incorrect"),
    ({"ssl.key.password": "nope"}, "Failed to load SSL keystore {key} of type JKS (configuration ssl.keystore.location): "
                                   "the key entry 'broker' does not open with ssl.key.password"),
    # Kafka: the key's password defaults to the store's, which is not this key's
    ({"ssl.key.password": ""}, "the key entry 'broker' does not open with ssl.key.password"),
    ({"ssl.keystore.password": ""}, "SSL key store {key} is specified, but key store password is not specified"),
    ({"ssl.truststore.password": "nope"}, "Failed to load SSL truststore {trust} of type JKS (configuration "
                                          "ssl.truststore.location): Keystore was tampered with, or password was incorrect"),
])
def test_jks_wrong_passwords_name_the_file(files, keytool_jks, wrong, fragment):
    key_store, trust_store = keytool_jks
    settings = {k: v for k, v in {**jks_settings(key_store, trust_store), **wrong}.items() if v}
    with pytest.raises(ConfigError) as err:
        tls_config(files, **settings)
    assert fragment.format(key=key_store, trust=trust_store) in str(err.value)


def test_pkcs12_named_jks(files, tmp_path):
    p12_named_jks = tmp_path / "really-p12.jks"  # keytool's default since Java 9
    p12_named_jks.write_bytes(files.broker_p12.read_bytes())
    assert tls_config(files, **{"ssl.keystore.type": "JKS", "ssl.keystore.location": str(p12_named_jks),
                                "ssl.keystore.password": certs.PKCS12_PASSWORD}).tls.listeners["SSL"]


def test_subject_dn_is_rfc2253_order():
    from cryptography.hazmat.primitives import serialization
    _, cert = certs.issue(certs.make_ca(), "alice", "clients")
    assert subject_dn(cert.public_bytes(serialization.Encoding.DER)) == "CN=alice,OU=clients,O=fauxka"
