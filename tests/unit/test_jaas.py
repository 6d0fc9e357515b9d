import pytest

from fauxka.broker.auth.jaas import PLAIN_MODULE, SCRAM_MODULE, JaasError, parse, server_entry
from fauxka.broker.config import ConfigError, config_from_dict

PLAIN_JAAS = (f'{PLAIN_MODULE} required username="broker" password="broker-secret" '
              'user_broker="broker-secret" user_alice="alice-secret";')
BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181",
        "listeners": "CLIENT://127.0.0.1:9092,BROKER://127.0.0.1:9093",
        "listener.security.protocol.map": "CLIENT:SASL_PLAINTEXT,BROKER:PLAINTEXT",
        "inter.broker.listener.name": "BROKER", "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.client.plain.sasl.jaas.config": PLAIN_JAAS}
INTER_BROKER_PLAIN = {"inter.broker.listener.name": "CLIENT", "sasl.mechanism.inter.broker.protocol": "PLAIN"}


def test_kafkas_example():
    entry = server_entry(PLAIN_JAAS)
    assert entry.login_module == PLAIN_MODULE and entry.flag == "REQUIRED"
    assert entry.options == {"username": "broker", "password": "broker-secret", "user_broker": "broker-secret",
                             "user_alice": "alice-secret"}


def test_tokens_comments_quotes_and_escapes():
    text = f"""// a comment
    {SCRAM_MODULE} Optional /* inline */ username='a\\"b' password="p\\tq\\101" some-key_$=word.with-dots;"""
    [entry] = parse(text)
    assert entry.flag == "OPTIONAL"
    assert entry.options == {"username": 'a"b', "password": "p\tqA", "some-key_$": "word.with-dots"}
    assert len(parse(f"{PLAIN_MODULE} required; {SCRAM_MODULE} sufficient;")) == 2


@pytest.mark.parametrize("text,message", [
    ("", "Login module not specified in JAAS config"),
    (PLAIN_MODULE, "Login module control flag not specified in JAAS config"),
    (f"{PLAIN_MODULE} mandatory;", "Invalid login module control flag 'mandatory' in JAAS config"),
    (f'{PLAIN_MODULE} required username="a"', "JAAS config entry not terminated by semi-colon"),
    (f"{PLAIN_MODULE} required username=;", "Value not specified for key 'username' in JAAS config"),
    (f"{PLAIN_MODULE} required password=123;", "Value not specified for key 'password' in JAAS config"),
    (f"{PLAIN_MODULE} required username;", "Value not specified for key 'username' in JAAS config"),
])
def test_kafkas_parse_errors(text, message):
    with pytest.raises(JaasError) as err:
        parse(text)
    assert str(err.value) == message


def test_one_module_per_server_entry():
    with pytest.raises(JaasError, match="contains 2 login modules, should be 1 module"):
        server_entry(f"{PLAIN_MODULE} required; {PLAIN_MODULE} required;")


def test_listener_settings_and_inter_broker_credentials():
    config = config_from_dict(BASE)
    client = config.sasl.listeners["CLIENT"]
    assert client.mechanisms == ("PLAIN",)
    assert client.plain_password("alice") == "alice-secret" and client.plain_password("bob") is None
    assert config.inter_broker_credentials() is None
    config = config_from_dict({**BASE, **INTER_BROKER_PLAIN})
    assert config.inter_broker_credentials() == ("PLAIN", "broker", "broker-secret")
    scram = config_from_dict({
        **BASE, "inter.broker.listener.name": "CLIENT", "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.client.scram-sha-512.sasl.jaas.config": f'{SCRAM_MODULE} required username="b" password="s";'})
    assert scram.inter_broker_credentials() == ("SCRAM-SHA-512", "b", "s")
    listener_level = {k: v for k, v in BASE.items() if k != "sasl.enabled.mechanisms"}
    assert config_from_dict({**listener_level, "listener.name.client.sasl.enabled.mechanisms": "PLAIN"}).unknown == {}


def test_kafkas_default_mechanism_gssapi_is_refused_naming_the_key():
    """Kafka's defaults are GSSAPI for both keys; fauxka has no Kerberos: a SASL listener names its
    mechanisms, a SASL inter-broker listener its own (as a Kafka without a Kerberos setup must)."""
    unset = {k: v for k, v in BASE.items() if k != "sasl.enabled.mechanisms"}
    with pytest.raises(ConfigError) as err:
        config_from_dict(unset)
    assert ("Invalid value GSSAPI for configuration sasl.enabled.mechanisms (Kafka's default, used as "
            "sasl.enabled.mechanisms is not set): SASL mechanism GSSAPI is not supported by fauxka") in str(err.value)
    with pytest.raises(ConfigError) as err:
        config_from_dict({**BASE, "inter.broker.listener.name": "CLIENT"})
    assert "sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms" in str(err.value)


@pytest.mark.parametrize("overrides,fragment", [
    ({"listener.name.client.plain.sasl.jaas.config": "nonsense"},
     "listener.name.client.plain.sasl.jaas.config: Login module control flag not specified"),
    ({"listener.name.other.plain.sasl.jaas.config": f"{PLAIN_MODULE} required username=;"},
     "listener.name.other.plain.sasl.jaas.config: Value not specified for key 'username'"),
    ({"listener.name.client.plain.sasl.jaas.config": "com.example.Login required;"},
     "com.example.Login is not supported"),
    ({"sasl.enabled.mechanisms": "PLAIN,GSSAPI"}, "SASL mechanism GSSAPI is not supported by fauxka"),
    ({"sasl.enabled.mechanisms": "SCRAM-SHA-256"},
     "Missing configuration listener.name.client.scram-sha-256.sasl.jaas.config: Could not find a 'KafkaServer' "
     "or 'client.KafkaServer' entry"),
    ({"sasl.enabled.mechanisms": "OAUTHBEARER",
      "listener.name.client.oauthbearer.sasl.jaas.config":
          "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
      "listener.name.client.oauthbearer.sasl.server.callback.handler.class":
          "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler"},
     "fauxka validates OAUTHBEARER tokens only as Kafka's default, the unsecured JWT validator"),
    ({"listener.security.protocol.map": "CLIENT:SSL,BROKER:PLAINTEXT"}, "a TLS listener needs a key store"),
    ({"listener.security.protocol.map": "CLIENT:SASL_SSL,BROKER:PLAINTEXT"}, "a TLS listener needs a key store"),
    ({"inter.broker.listener.name": "CLIENT", "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256"},
     "sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms"),
    ({**INTER_BROKER_PLAIN, "listener.name.client.plain.sasl.jaas.config": f'{PLAIN_MODULE} required user_a="b";'},
     "needs username and password options"),
])
def test_start_up_errors_name_the_key(overrides, fragment):
    with pytest.raises(ConfigError) as err:
        config_from_dict({**BASE, **overrides})
    assert fragment in str(err.value)
