import pytest

from fauxka.broker.config import ConfigError, config_from_dict, load_config
from fauxka.broker.properties import parse_properties
from fauxka.model.broker_keys import BROKER_CONFIGS

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181"}


def test_properties_format():
    text = "# comment\n! also a comment\n\nbroker.id = 3\nlisteners:PLAINTEXT://:9092\n" \
           "log.dirs /a,\\\n    /b\nempty=\nescaped\\=key=v\n"
    assert parse_properties(text) == {
        "broker.id": "3", "listeners": "PLAINTEXT://:9092", "log.dirs": "/a,/b", "empty": "", "escaped=key": "v",
    }


def test_defaults_are_kafkas():
    config = config_from_dict(BASE)
    assert config["num.partitions"] == 1
    assert config["default.replication.factor"] == 1
    assert config["socket.request.max.bytes"] == 104857600
    assert config["zookeeper.session.timeout.ms"] == 18000
    assert config["zookeeper.connection.timeout.ms"] == 18000
    assert config["log.dirs"] == ["/tmp/kafka-logs"]
    assert [ep.uri() for ep in config.listeners] == ["PLAINTEXT://:9092"]
    assert config.advertised == config.listeners
    assert config.inter_broker_listener == "PLAINTEXT"


def test_named_listeners_and_protocol_map():
    config = config_from_dict({
        **BASE,
        "listeners": "CLIENT://127.0.0.1:9092,BROKER://[::1]:19092",
        "listener.security.protocol.map": "CLIENT:SASL_PLAINTEXT,BROKER:PLAINTEXT",
        "inter.broker.listener.name": "broker",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.client.plain.sasl.jaas.config":
            "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"a\";",
    })
    assert [(e.listener, e.host, e.port, e.security_protocol) for e in config.listeners] == [
        ("CLIENT", "127.0.0.1", 9092, "SASL_PLAINTEXT"), ("BROKER", "::1", 19092, "PLAINTEXT")]
    assert config.inter_broker_listener == "BROKER"


@pytest.mark.parametrize("key,value,fragment", [
    ("num.partitions", "many", "num.partitions"),
    ("num.partitions", "0", "at least 1"),
    ("auto.create.topics.enable", "yes", "true or false"),
    ("listeners", "PLAINTEXT:9092", "NAME://host:port"),
    ("listeners", "CLIENT://:9092", "No security protocol defined for listener CLIENT"),
    ("advertised.listeners", "PLAINTEXT://0.0.0.0:9092", "nonroutable meta-address"),
    ("inter.broker.listener.name", "OTHER", "inter.broker.listener.name"),
    ("listener.security.protocol.map", "PLAINTEXT", "listener.security.protocol.map"),
])
def test_bad_values_name_the_key(key, value, fragment):
    with pytest.raises(ConfigError) as err:
        config_from_dict({**BASE, key: value})
    assert fragment in str(err.value)


def test_zookeeper_connect_is_required_and_broker_id_defaults_to_minus_one_as_in_kafka():
    with pytest.raises(ConfigError, match="zookeeper.connect"):
        config_from_dict({"broker.id": "1"})
    config = config_from_dict({"zookeeper.connect": "zk:2181"})
    assert config.broker_id == -1 and config["reserved.broker.max.id"] == 1000
    assert config.with_broker_id(1001).broker_id == 1001


@pytest.mark.parametrize("broker_id,reserved", [("-2", "1000"), ("1001", "1000"), ("6", "5")])
def test_broker_id_between_minus_one_and_the_reserved_maximum(broker_id, reserved):
    with pytest.raises(ConfigError, match="broker.id must be greater than or equal to -1 and not greater than "
                                          "reserved.broker.max.id"):
        config_from_dict({**BASE, "broker.id": broker_id, "reserved.broker.max.id": reserved})


def test_unknown_keys_are_kept_for_a_warning_and_overrides_win(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("broker.id=1\nzookeeper.connect=zk:2181\nno.such.key=1\nnum.partitions=2\n")
    config = load_config(path, ["num.partitions=6", "broker.rack = r1"])
    assert config.unknown == {"no.such.key": "1"}
    assert config["num.partitions"] == 6
    assert config["broker.rack"] == "r1"
    with pytest.raises(ConfigError, match="key=value"):
        load_config(path, ["novalue"])


def test_catalogue_defaults_pass_their_own_checks():
    for key in BROKER_CONFIGS.values():
        if key.check is not None and key.default is not None:
            assert key.check(key.default) is None, key.name
