import pytest

from fauxka.model.topic_configs import (
    BROKER_SYNONYM_KEYS,
    TOPIC_CONFIGS,
    ConfigSource,
    ConfigSynonym,
    ConfigType,
    ConfigValidationError,
    effective_topic_configs,
    validate_broker_synonym,
    validate_topic_configs,
)

LONG_MAX = "9223372036854775807"


def describe(overrides=None, dynamic=None, dynamic_default=None, static=None, synonyms=True, docs=False):
    entries = effective_topic_configs(overrides or {}, dynamic or {}, dynamic_default or {}, static or {},
                                      synonyms, include_documentation=docs)
    return {e.name: e for e in entries}


def error(configs) -> ConfigValidationError:
    with pytest.raises(ConfigValidationError) as info:
        validate_topic_configs(configs)
    return info.value


# ---- catalogue ----

def test_defaults_match_kafka_3_4():
    expected = {
        "cleanup.policy": "delete", "compression.type": "producer", "delete.retention.ms": "86400000",
        "file.delete.delay.ms": "60000", "flush.messages": LONG_MAX, "flush.ms": LONG_MAX,
        "follower.replication.throttled.replicas": "", "index.interval.bytes": "4096",
        "leader.replication.throttled.replicas": "", "max.compaction.lag.ms": LONG_MAX,
        "max.message.bytes": "1048588", "message.downconversion.enable": "true",
        "message.format.version": "3.0-IV1", "message.timestamp.difference.max.ms": LONG_MAX,
        "message.timestamp.type": "CreateTime", "min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": "0",
        "min.insync.replicas": "1", "preallocate": "false", "retention.bytes": "-1", "retention.ms": "604800000",
        "segment.bytes": "1073741824", "segment.index.bytes": "10485760", "segment.jitter.ms": "0",
        "segment.ms": "604800000", "unclean.leader.election.enable": "false",
        "remote.storage.enable": "false", "local.retention.ms": "-2", "local.retention.bytes": "-2",
    }
    assert {n: d.default for n, d in TOPIC_CONFIGS.items()} == expected


def test_described_defaults_equal_catalogue_defaults():
    entries = describe()
    assert len(entries) == 26  # the three tiered-storage configs are internal in 3.4
    for name, entry in entries.items():
        assert entry.value == TOPIC_CONFIGS[name].default, name
        assert entry.source == ConfigSource.DEFAULT_CONFIG
        assert entry.read_only is False and entry.sensitive is False
        assert entry.documentation is None


def test_config_types():
    entries = describe()
    assert entries["cleanup.policy"].config_type == ConfigType.LIST == 7
    assert entries["retention.ms"].config_type == ConfigType.LONG == 5
    assert entries["segment.bytes"].config_type == ConfigType.INT == 3
    assert entries["preallocate"].config_type == ConfigType.BOOLEAN == 1
    assert entries["compression.type"].config_type == ConfigType.STRING == 2
    assert entries["min.cleanable.dirty.ratio"].config_type == ConfigType.DOUBLE == 6
    assert not any(d.type == "PASSWORD" for d in TOPIC_CONFIGS.values())


def test_synonym_order_and_broker_keys():
    assert [s.name for s in TOPIC_CONFIGS["retention.ms"].synonyms] == [
        "log.retention.ms", "log.retention.minutes", "log.retention.hours"]
    assert [s.name for s in TOPIC_CONFIGS["flush.ms"].synonyms] == [
        "log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    assert [s.name for s in TOPIC_CONFIGS["file.delete.delay.ms"].synonyms] == ["log.segment.delete.delay.ms"]
    assert TOPIC_CONFIGS["leader.replication.throttled.replicas"].synonyms == ()
    every = {s.name for d in TOPIC_CONFIGS.values() for s in d.synonyms}
    assert every == set(BROKER_SYNONYM_KEYS)
    assert BROKER_SYNONYM_KEYS["log.retention.hours"] == ("int", "168")
    assert BROKER_SYNONYM_KEYS["log.retention.ms"] == ("long", None)
    assert BROKER_SYNONYM_KEYS["log.cleaner.min.cleanable.ratio"] == ("double", "0.5")


# ---- validation ----

def test_valid_configs_pass():
    validate_topic_configs({})
    validate_topic_configs({"cleanup.policy": "compact, delete", "retention.ms": " -1 ", "preallocate": "TRUE",
                            "min.cleanable.dirty.ratio": "1e-3", "message.format.version": "2.8",
                            "leader.replication.throttled.replicas": "0:1, 1:2"})
    validate_topic_configs({"follower.replication.throttled.replicas": "*", "cleanup.policy": "",
                            "message.format.version": "0.10.0.1", "remote.storage.enable": "true"})


def test_unknown_name():
    e = error({"retention.ms": "1", "retention.hours": "1"})
    assert e.message == "Unknown topic config name: retention.hours"
    assert e.config_exception is False


def test_unknown_name_checked_before_values():
    assert error({"retention.ms": "x", "nope": "1"}).message == "Unknown topic config name: nope"


@pytest.mark.parametrize("configs, message", [
    ({"retention.ms": "abc"}, "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ({"retention.ms": " 1_000"}, "Invalid value  1_000 for configuration retention.ms: Not a number of type LONG"),
    ({"segment.bytes": "2147483648"},
     "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT"),
    ({"min.cleanable.dirty.ratio": "half"},
     "Invalid value half for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE"),
    ({"preallocate": "yes"}, "Invalid value yes for configuration preallocate: Expected value to be either true or false"),
    ({"retention.ms": "-2"}, "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
    ({"segment.bytes": " 13 "}, "Invalid value 13 for configuration segment.bytes: Value must be at least 14"),
    ({"segment.ms": "0"}, "Invalid value 0 for configuration segment.ms: Value must be at least 1"),
    ({"min.insync.replicas": "0"}, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
    ({"min.cleanable.dirty.ratio": "2"},
     "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
    ({"min.cleanable.dirty.ratio": "-0.5"},
     "Invalid value -0.5 for configuration min.cleanable.dirty.ratio: Value must be at least 0"),
    ({"min.cleanable.dirty.ratio": "-1e-5"},
     "Invalid value -1.0E-5 for configuration min.cleanable.dirty.ratio: Value must be at least 0"),
    ({"local.retention.ms": "-3"}, "Invalid value -3 for configuration local.retention.ms: Value must be at least -2"),
    ({"cleanup.policy": "compact,Delete"},
     "Invalid value Delete for configuration cleanup.policy: String must be one of: compact, delete"),
    ({"compression.type": "GZIP"}, "Invalid value GZIP for configuration compression.type: "
                                   "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ({"message.timestamp.type": "create"},
     "Invalid value create for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime"),
    ({"message.format.version": "9.9"},
     "Invalid value 9.9 for configuration message.format.version: Version 9.9 is not a valid version"),
    ({"leader.replication.throttled.replicas": "0:1,x"},
     "Invalid value [0:1, x] for configuration leader.replication.throttled.replicas: "
     "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following "
     "format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."),
])
def test_value_messages(configs, message):
    e = error(configs)
    assert e.message == message
    assert e.config_exception is True


def test_first_bad_value_in_definition_order():
    # segment.bytes is defined before retention.ms, whatever the request's order
    e = error({"retention.ms": "x", "segment.bytes": "y"})
    assert e.message == "Invalid value y for configuration segment.bytes: Not a number of type INT"


def test_compaction_lag_conflict():
    validate_topic_configs({"min.compaction.lag.ms": "100", "max.compaction.lag.ms": "100"})
    e = error({"min.compaction.lag.ms": "101", "max.compaction.lag.ms": "100"})
    assert e.message == "conflict topic config setting min.compaction.lag.ms (101) > max.compaction.lag.ms (100)"
    assert e.config_exception is False
    validate_topic_configs({"max.compaction.lag.ms": "1"})  # min defaults to 0


def test_metadata_versions():
    for ok in ("0.8.0", "0.10.0", "0.10.0-IV1", "0.10.0.1", "1.0", "1.0.1", "2.8", "2.8-IV1", "3.0-IV1", "3.4"):
        validate_topic_configs({"message.format.version": ok})
    for bad in ("3.5", "1.0.", "", "0.10.9", "2.8-IV9"):
        assert "is not a valid version" in error({"message.format.version": bad}).message


def test_broker_synonym_validation():
    assert validate_broker_synonym("log.retention.hours", " 5 ") == 5
    assert validate_broker_synonym("log.cleanup.policy", "compact ,delete") == ["compact", "delete"]
    with pytest.raises(ConfigValidationError, match="Invalid value 0 for configuration log.roll.hours: "
                                                    "Value must be at least 1"):
        validate_broker_synonym("log.roll.hours", "0")


# ---- effective values, sources and synonyms ----

def test_topic_override_is_source_1_and_canonical():
    entries = describe({"retention.ms": " 1000 ", "cleanup.policy": "compact , delete", "preallocate": "TRUE",
                        "min.cleanable.dirty.ratio": "0.50"})
    e = entries["retention.ms"]
    assert (e.value, e.source) == ("1000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert e.synonyms == [ConfigSynonym("retention.ms", "1000", 1)]  # log.retention.hours=168 is dropped
    assert [s.source for s in entries["cleanup.policy"].synonyms] == [1, 5]
    assert entries["cleanup.policy"].value == "compact,delete"
    assert entries["preallocate"].value == "true"
    assert entries["min.cleanable.dirty.ratio"].value == "0.5"
    assert entries["leader.replication.throttled.replicas"].source == ConfigSource.DEFAULT_CONFIG


def test_static_hours_convert_but_report_default_source():
    # ConfigHelper drops synonyms listed before the first synonym's own name (log.retention.ms):
    # Kafka 3.4 (ZK) reports DEFAULT_CONFIG and no synonyms, as its testCreateTopicsReturnsConfigs expects.
    e = describe(static={"log.retention.hours": "1"})["retention.ms"]
    assert (e.value, e.source, e.synonyms) == ("3600000", ConfigSource.DEFAULT_CONFIG, [])
    e = describe(static={"log.roll.hours": "2", "log.retention.minutes": "240"})
    assert (e["segment.ms"].value, e["segment.ms"].source) == ("7200000", 5)
    assert (e["retention.ms"].value, e["retention.ms"].source) == ("14400000", 5)


def test_retention_ms_beats_hours():
    e = describe(static={"log.retention.hours": "1", "log.retention.ms": "5000"})["retention.ms"]
    assert (e.value, e.source) == ("5000", ConfigSource.STATIC_BROKER_CONFIG)
    assert e.synonyms == [ConfigSynonym("log.retention.ms", "5000", 4), ConfigSynonym("log.retention.hours", "1", 4),
                          ConfigSynonym("log.retention.hours", "168", 5)]
    e = describe(static={"log.retention.minutes": "2", "log.retention.hours": "1"})["retention.ms"]
    assert e.value == "120000"
    e = describe(static={"log.retention.ms": "-5"})["retention.ms"]
    assert e.value == "-1"  # KafkaConfig.logRetentionTimeMillis: negative means -1


def test_broker_precedence():
    static = {"log.cleaner.delete.retention.ms": "1", "log.segment.bytes": "1000"}
    default = {"log.cleaner.delete.retention.ms": "2"}
    dynamic = {"log.cleaner.delete.retention.ms": "3"}
    e = describe(static=static, dynamic_default=default, dynamic=dynamic)
    d = e["delete.retention.ms"]
    assert (d.value, d.source) == ("3", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert [(s.value, s.source) for s in d.synonyms] == [("3", 2), ("2", 3), ("1", 4), ("86400000", 5)]
    d = describe(static=static, dynamic_default=default)["delete.retention.ms"]
    assert (d.value, d.source) == ("2", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    s = e["segment.bytes"]
    assert (s.value, s.source) == ("1000", ConfigSource.STATIC_BROKER_CONFIG)
    assert s.synonyms == [ConfigSynonym("log.segment.bytes", "1000", 4),
                          ConfigSynonym("log.segment.bytes", "1073741824", 5)]
    override = describe({"delete.retention.ms": "7"}, static=static, dynamic_default=default)["delete.retention.ms"]
    assert (override.value, override.source) == ("7", 1)
    assert [s.source for s in override.synonyms] == [1, 3, 4, 5]


def test_dynamic_level_hides_static_synonyms():
    # DynamicBrokerConfig.overrideProps: a dynamic log.retention.ms removes static log.retention.hours
    e = describe(static={"log.retention.hours": "1"}, dynamic_default={"log.retention.ms": "10800000"})
    r = e["retention.ms"]
    assert (r.value, r.source) == ("10800000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert [(s.name, s.source) for s in r.synonyms] == [
        ("log.retention.ms", 3), ("log.retention.hours", 4), ("log.retention.hours", 5)]


def test_broker_values_are_reported_canonically():
    e = describe(static={"log.cleanup.policy": "compact , delete", "log.cleaner.min.cleanable.ratio": "1",
                         "unclean.leader.election.enable": "TRUE", "log.flush.scheduler.interval.ms": "1000"})
    assert e["cleanup.policy"].value == "compact,delete"
    assert e["cleanup.policy"].synonyms[0] == ConfigSynonym("log.cleanup.policy", "compact , delete", 4)
    assert e["min.cleanable.dirty.ratio"].value == "1.0"
    assert e["unclean.leader.election.enable"].value == "true"
    assert (e["flush.ms"].value, e["flush.ms"].source) == ("1000", 5)  # the second synonym: dropped


def test_message_format_version_ignored_from_ibp_3_0():
    e = describe(static={"log.message.format.version": "2.8"})["message.format.version"]
    assert (e.value, e.source) == ("3.0-IV1", ConfigSource.STATIC_BROKER_CONFIG)
    assert e.synonyms[0] == ConfigSynonym("log.message.format.version", "2.8", 4)
    old = {"log.message.format.version": "2.8", "inter.broker.protocol.version": "2.8"}
    assert describe(static=old)["message.format.version"].value == "2.8-IV1"
    assert describe({"message.format.version": " 2.1 "})["message.format.version"].value == "2.1"


def test_include_synonyms_false_and_documentation():
    e = describe({"retention.ms": "1"}, synonyms=False, docs=True)["retention.ms"]
    assert e.synonyms == [] and e.source == 1
    assert e.documentation == TOPIC_CONFIGS["retention.ms"].documentation


def test_internal_configs_only_when_overridden_and_raw():
    e = describe({"remote.storage.enable": " TRUE"})
    assert e["remote.storage.enable"].value == " TRUE"
    assert e["remote.storage.enable"].source == 1
    assert "local.retention.ms" not in e


def test_unknown_override_is_sensitive():
    e = describe({"some.plugin.key": "secret"})["some.plugin.key"]
    assert (e.value, e.sensitive, e.source, e.config_type) == (None, True, 1, ConfigType.UNKNOWN)
    assert e.synonyms == [ConfigSynonym("some.plugin.key", None, 1)]


def test_local_retention_checked_when_building_the_config():
    describe({"local.retention.ms": "1000", "retention.ms": "2000"})
    with pytest.raises(ConfigValidationError) as info:
        describe({"local.retention.ms": "3000", "retention.ms": "2000"})
    assert info.value.message == ("Invalid value 3000 for configuration local.retention.ms: "
                                  "Value must not be more than property: retention.ms value.")
    with pytest.raises(ConfigValidationError) as info:
        describe({"local.retention.ms": "-1"})
    assert info.value.message == ("Invalid value -1 for configuration local.retention.ms: "
                                  "Value must not be -1 as retention.ms value is set as 604800000.")
    with pytest.raises(ConfigValidationError, match="retention.bytes value"):
        describe({"local.retention.bytes": "10"})  # retention.bytes is -1 by default
