"""KAFKA_* environment variables to broker properties, as cp-kafka maps them (fauxka/kafka_env.py)."""

import pytest

from fauxka.broker.config import config_from_dict
from fauxka.model.broker_keys import BROKER_CONFIGS
from fauxka import kafka_env
from fauxka.kafka_env import EnvConfigError, from_environment, property_name, variable_name


@pytest.mark.parametrize("variable, prop", [
    ("KAFKA_BROKER_ID", "broker.id"),
    ("KAFKA_ADVERTISED_LISTENERS", "advertised.listeners"),
    ("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "auto.create.topics.enable"),
    ("KAFKA_FAUXKA_POLICY_MIN_REPLICATION_FACTOR", "fauxka.policy.min.replication.factor"),
    ("KAFKA_LISTENER_NAME_CLIENT_SCRAM___SHA___256_SASL_JAAS_CONFIG",
     "listener.name.client.scram-sha-256.sasl.jaas.config"),
    ("KAFKA_FAUXKA_POLICY_CONFIG_RETENTION__MS_MAX", "fauxka.policy.config.retention_ms.max"),
])
def test_property_names_as_cp_kafka_maps_them(variable, prop):
    assert property_name(variable) == prop
    assert variable_name(prop) == variable


def test_four_underscores_have_no_meaning():
    with pytest.raises(EnvConfigError, match="KAFKA_A____B"):
        property_name("KAFKA_A____B")


def test_every_catalogued_key_round_trips():
    for name in BROKER_CONFIGS:
        assert property_name(variable_name(name)) == name


def test_a_cp_kafka_service_environment_loads():
    env = {
        "KAFKA_BROKER_ID": "1",
        "KAFKA_ZOOKEEPER_CONNECT": "zookeeper:2181",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
        "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://broker:29092,PLAINTEXT_HOST://localhost:9092",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
        "KAFKA_JMX_PORT": "9101",
        "KAFKA_HEAP_OPTS": "-Xmx1G",
        "KAFKA_LOG4J_ROOT_LOGLEVEL": "WARN",
        "PATH": "/usr/bin",  # not ours
    }
    result = from_environment(env)
    assert result.ignored == ["KAFKA_HEAP_OPTS", "KAFKA_JMX_PORT"]
    assert "path" not in result.properties
    assert result.properties["log.level"] == "WARNING"
    # cp-kafka's `cub listeners`: without KAFKA_LISTENERS, every advertised port on all interfaces
    assert result.properties["listeners"] == "PLAINTEXT://0.0.0.0:29092,PLAINTEXT_HOST://0.0.0.0:9092"
    config = config_from_dict(result.properties)
    assert config.broker_id == 1
    assert [(ep.listener, ep.host, ep.port) for ep in config.advertised] == [
        ("PLAINTEXT", "broker", 29092), ("PLAINTEXT_HOST", "localhost", 9092)]
    assert config.inter_broker_listener == "PLAINTEXT"
    assert config.unknown == {}


def test_explicit_listeners_are_kept():
    result = from_environment({"KAFKA_LISTENERS": "PLAINTEXT://0.0.0.0:9092",
                               "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://b:19092"})
    assert result.properties["listeners"] == "PLAINTEXT://0.0.0.0:9092"


def test_an_unknown_variable_is_refused_by_name():
    with pytest.raises(EnvConfigError) as caught:
        from_environment({"KAFKA_BROKER_ID": "1", "KAFKA_NO_SUCH_SETTING": "x"})
    assert str(caught.value).startswith("KAFKA_NO_SUCH_SETTING names the broker property no.such.setting")


def test_a_typo_gets_a_suggestion():
    with pytest.raises(EnvConfigError, match=r"did you mean KAFKA_AUTO_CREATE_TOPICS_ENABLE"):
        from_environment({"KAFKA_AUTO_CREATE_TOPIC_ENABLE": "true"})


def test_legacy_port_variables_are_refused():
    # cp-kafka refuses KAFKA_PORT too ("port is deprecated"); Docker links and Kubernetes services
    # named kafka set it, so a clear error beats a silently wrong listener.
    with pytest.raises(EnvConfigError, match="KAFKA_PORT"):
        from_environment({"KAFKA_PORT": "tcp://10.0.0.1:9092"})


def test_a_bad_log4j_level_is_refused():
    with pytest.raises(EnvConfigError, match="KAFKA_LOG4J_ROOT_LOGLEVEL=LOUD"):
        from_environment({"KAFKA_LOG4J_ROOT_LOGLEVEL": "LOUD"})


def test_honoured_properties_cover_the_catalogue_and_topic_defaults():
    honoured = kafka_env.honoured_properties()
    assert set(BROKER_CONFIGS) <= set(honoured)
    assert "log.retention.ms" in honoured  # a broker synonym of a topic config


@pytest.fixture
def kafka_environment(monkeypatch):
    import os

    for name in [n for n in os.environ if n.startswith("KAFKA_")]:
        monkeypatch.delenv(name)
    return monkeypatch


def test_the_broker_command_names_the_missing_variable(kafka_environment, capsys):
    from fauxka import cli

    kafka_environment.setenv("KAFKA_BROKER_ID", "1")  # (broker.id may be left out: Kafka's -1, generated)
    assert cli.main(["broker", "--kafka-env"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ('fauxka broker: Missing required configuration "zookeeper.connect" which has no default value. '
                   "(environment variable KAFKA_ZOOKEEPER_CONNECT)")


def test_the_broker_command_refuses_an_unknown_variable_in_one_line(kafka_environment, capsys):
    from fauxka import cli

    kafka_environment.setenv("KAFKA_BROKER_ID", "1")
    kafka_environment.setenv("KAFKA_ZOOKEEPER_CONNECT", "zookeeper:2181")
    kafka_environment.setenv("KAFKA_NO_SUCH_SETTING", "1")
    assert cli.main(["broker", "--kafka-env"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fauxka broker: KAFKA_NO_SUCH_SETTING names the broker property")


def test_the_broker_command_needs_a_file_or_the_environment(capsys):
    from fauxka import cli

    assert cli.main(["broker"]) == 2
    assert "--config FILE, --kafka-env or both" in capsys.readouterr().err
