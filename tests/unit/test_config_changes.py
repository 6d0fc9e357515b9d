"""AlterConfigs / IncrementalAlterConfigs logic without processes: incremental operations, broker
dynamic-config rules, DescribeConfigs entries for brokers, and the per-resource order of checks."""

import asyncio
import json

import pytest

from fauxka.controller import configs as C
from fauxka.controller.audit import Caller
from fauxka.controller.policy import PolicySet, TopicState
from fauxka.model import broker_configs as bc
from fauxka.model.errors import KafkaError
from fauxka.zkstore import MultiFailed, NoNode

LIST_KEYS, SCALARS = {"cleanup.policy": "delete", "throttled": ""}, {"retention.ms"}


def is_list(name):
    return True if name in LIST_KEYS else False if name in SCALARS else None


def apply(current, *ops):
    return C.apply_incremental(current, [C.AlterOp(n, v, o) for n, o, v in ops], is_list, LIST_KEYS.get)


# --- incremental operations ----------------------------------------------------------------------------

def test_java_split():
    assert C.java_split("") == [""]
    assert C.java_split("a,b,") == ["a", "b"]
    assert C.java_split(",a") == ["", "a"]
    assert C.java_split(",") == []


def test_set_and_delete():
    assert apply({"a": "1"}, ("a", C.SET, "2"), ("b", C.SET, "3")) == {"a": "2", "b": "3"}
    assert apply({"a": "1"}, ("a", C.DELETE, None), ("missing", C.DELETE, None)) == {}


def test_append_starts_from_the_default_and_skips_present_values():
    assert apply({}, ("cleanup.policy", C.APPEND, "compact")) == {"cleanup.policy": "delete,compact"}
    assert apply({"cleanup.policy": "compact"}, ("cleanup.policy", C.APPEND, "compact,delete")) == {
        "cleanup.policy": "compact,delete"}
    assert apply({}, ("throttled", C.APPEND, "0:1")) == {"throttled": "0:1"}  # empty default: nothing before


def test_subtract_removes_one_occurrence_each():
    assert apply({}, ("cleanup.policy", C.SUBTRACT, "delete")) == {"cleanup.policy": ""}
    assert apply({"throttled": "0:1,0:1,1:2"}, ("throttled", C.SUBTRACT, "0:1")) == {"throttled": "0:1,1:2"}
    assert apply({"throttled": "0:1"}, ("throttled", C.SUBTRACT, "9:9")) == {"throttled": "0:1"}


def test_operations_apply_in_order():
    assert apply({}, ("cleanup.policy", C.SET, "compact"), ("cleanup.policy", C.APPEND, "delete"),
                 ("cleanup.policy", C.SUBTRACT, "compact")) == {"cleanup.policy": "delete"}


def test_append_errors():
    with pytest.raises(KafkaError) as raised:
        apply({}, ("retention.ms", C.APPEND, "1"))
    assert (raised.value.code, raised.value.message) == (40, "Config value append is not allowed for config key: "
                                                             "retention.ms")
    with pytest.raises(KafkaError) as raised:
        apply({}, ("retention.ms", C.SUBTRACT, "1"))
    assert raised.value.message == "Config value subtract is not allowed for config key: retention.ms"
    for ops in ((("nope", C.APPEND, "1"),), (("retention.ms", 7, "1"),)):
        with pytest.raises(KafkaError) as raised:
            apply({}, *ops)
        assert (raised.value.code, raised.value.message) == (-1, None)


def test_node_ids_parse_as_java_ints():
    assert C.java_int("1") and C.java_int("-3") and C.java_int("+7")
    assert not C.java_int(" 1") and not C.java_int("1.0") and not C.java_int("2147483648")
    for name, message in (("01x", "Node id must be an integer, but it is: 01x"),
                          ("2", "Unexpected broker id, expected 1, but received 2")):
        with pytest.raises(KafkaError) as raised:
            C.check_node_id(name, 1)
        assert (raised.value.code, raised.value.message) == (42, message)
    C.check_node_id("01", 1)


# --- broker dynamic configs ------------------------------------------------------------------------------

def validate(props, per_broker=True, static=None, default=None, broker=None):
    bc.validate_dynamic_change(props, per_broker, static or {}, default or {}, broker or {})


@pytest.mark.parametrize("props,per_broker,message", [
    ({"broker.id": "2"}, True, "Cannot update these configs dynamically: Set(broker.id)"),
    ({"log.retention.hours": "1"}, True, "Cannot update these configs dynamically: Set(log.retention.hours)"),
    ({"log.message.format.version": "2.8"}, True, "Cannot update these configs dynamically: "
                                                  "Set(log.message.format.version)"),
    ({"ssl.truststore.type": "JKS"}, True, "These security configs can be dynamically updated only per-listener "
                                           "using the listener prefix: Set(ssl.truststore.type)"),
    ({"log.retention.ms": "x"}, True, "Invalid value x for configuration log.retention.ms: Not a number of type LONG"),
    ({"log.cleanup.policy": "compact,nope"}, False,
     "Invalid value nope for configuration log.cleanup.policy: String must be one of: compact, delete"),
    ({"listener.name.internal.num.network.threads": "0"}, True,
     "Invalid value 0 for configuration num.network.threads: Value must be at least 1"),
    ({"advertised.listeners": "PLAINTEXT://h:1"}, False, "Cannot update these configs at default cluster level, "
                                                         "broker id must be specified: Set(advertised.listeners)"),
    ({"num.io.threads": "3"}, True, "Dynamic thread count update validation failed for num.io.threads=3, "
                                    "value should be at least half the current value 8"),
])
def test_refused_broker_changes(props, per_broker, message):
    with pytest.raises(bc.BrokerConfigError) as raised:
        validate(props, per_broker)
    assert raised.value.message == message


def test_accepted_broker_changes():
    validate({"log.retention.ms": "1000", "message.max.bytes": "2000000", "my.custom.key": "anything"})
    validate({"num.io.threads": "16"}, per_broker=False)
    validate({"num.io.threads": "4"}, static={"num.io.threads": "6"})  # at least half of 6
    validate({"leader.replication.throttled.rate": "1000"})
    validate({"listener.name.plaintext.max.connections": "10"}, per_broker=False)


def test_effective_dynamic_drops_what_kafka_ignores():
    persisted = {"log.retention.hours": "1", "log.retention.ms": "bad", "message.max.bytes": "5",
                 "listeners": "PLAINTEXT://:1", "custom": "x"}
    assert bc.effective_dynamic(persisted, True) == {"message.max.bytes": "5", "listeners": "PLAINTEXT://:1",
                                                     "custom": "x"}
    assert bc.effective_dynamic(persisted, False) == {"message.max.bytes": "5", "custom": "x"}


def test_broker_synonyms_and_types():
    assert bc.broker_synonyms("log.retention.hours") == ["log.retention.ms", "log.retention.minutes",
                                                         "log.retention.hours"]
    assert bc.broker_synonyms("log.flush.scheduler.interval.ms") == ["log.flush.scheduler.interval.ms"]
    assert bc.broker_synonyms("listener.name.ext.sasl.plain.sasl.jaas.config") == [
        "listener.name.ext.sasl.plain.sasl.jaas.config", "sasl.jaas.config"]
    assert bc.config_type("listener.name.ext.num.network.threads") == "INT"
    assert bc.config_type("listeners") == "STRING" and bc.config_type("offsets.topic.replication.factor") == "SHORT"
    assert bc.is_sensitive("custom.key") and not bc.is_sensitive("log.retention.ms")
    assert bc.is_list("log.cleanup.policy") and bc.is_list("listeners") is False
    assert bc.is_list("leader.replication.throttled.rate") is None  # not a KafkaConfig key


def by_name(entries):
    return {e.name: e for e in entries}


def test_describe_broker_sources_synonyms_and_read_only():
    static = {"broker.id": "1", "log.retention.hours": "24", "fauxka.policy.x": "secret", "num.io.threads": "4"}
    entries = by_name(bc.describe_broker(static, {"log.retention.ms": "1000"}, {"num.io.threads": "6"},
                                         per_broker=True, include_synonyms=True, include_documentation=True))
    io = entries["num.io.threads"]
    assert (io.value, io.source, io.read_only) == ("6", 2, False)
    assert [(s.name, s.value, s.source) for s in io.synonyms] == [
        ("num.io.threads", "6", 2), ("num.io.threads", "4", 4), ("num.io.threads", "8", 5)]
    retention = entries["log.retention.ms"]
    assert (retention.value, retention.source) == ("1000", 3)
    assert [s.source for s in retention.synonyms] == [3, 4, 5]
    assert (entries["broker.id"].source, entries["broker.id"].read_only) == (4, True)
    custom = entries["fauxka.policy.x"]
    assert (custom.value, custom.sensitive, custom.config_type, custom.source) == (None, True, 0, 4)
    assert entries["broker.rack"].value is None and entries["broker.rack"].source == 5
    assert "metrics.port" not in entries  # fauxka's own keys are custom to Kafka: shown only when set
    assert entries["log.cleanup.policy"].documentation


def test_describe_cluster_default_lists_only_the_default_layer():
    entries = bc.describe_broker({"log.retention.ms": "5"}, {"log.retention.ms": "1000", "custom": "c"},
                                 {"log.retention.ms": "7"}, per_broker=False, include_synonyms=True,
                                 include_documentation=False)
    got = [(e.name, e.value, e.source, [(s.name, s.source) for s in e.synonyms]) for e in entries]
    assert got == [("log.retention.ms", "1000", 3, [("log.retention.ms", 3)]), ("custom", None, 3, [("custom", 3)])]


# --- the pipeline with a fake controller ------------------------------------------------------------------

class FakeWriter:
    def __init__(self, missing=()):
        self.writes, self.missing = [], set(missing)

    async def write(self, ops):
        if ops[0].kind == "set" and ops[0].path in self.missing:
            raise MultiFailed(0, NoNode(ops[0].path))
        self.writes.append(ops)
        return [None] * len(ops)


class FakePurgatory:
    async def wait(self, keys, complete, timeout_s):
        return complete(set(keys))


class FakeAudit:
    def __init__(self):
        self.events = []

    def record(self, caller, **event):
        self.events.append(event)


class FakeCache:
    def __init__(self):
        self.topics = self.all_topics = {"t": object()}
        self.topic_configs = {"t": {"retention.ms": "1"}}
        self.broker_configs = {}

    def watch_owned(self, topics=None):
        pass


class FakeConfig(dict):
    broker_id = 1
    originals = {"broker.id": "1"}


class FakeAdmin:
    """Stands in for the controller's parts ConfigWrites uses; itself the policy gate and the waits."""

    def __init__(self, missing=()):
        self.cache, self.writer, self.audit = FakeCache(), FakeWriter(missing), FakeAudit()
        self.purgatory, self.policies, self.config = FakePurgatory(), PolicySet(), FakeConfig({"log.level": "INFO"})
        self.checked, self.cluster_waits = [], []

    def state_of(self, topic):
        return TopicState(1, 1, {0: [1]}, dict(self.cache.topic_configs.get(topic, {})))

    async def wait_cluster(self, names, timeout_s, outcomes):
        self.cluster_waits.append(sorted(names))

    def check_topic(self, action, topic, pre, post, caller, validate_only, **details):
        self.checked.append((action.value, topic, pre.configs, post.configs, validate_only, details))

    def check_broker(self, broker, requested):
        self.checked.append(("BROKER", broker, requested))


CALLER = Caller("User:ANONYMOUS", "127.0.0.1", 1, None, "incremental_alter_configs", 1)


def run(admin, changes, validate_only=False, incremental=True):
    writes = C.ConfigWrites(admin.config, admin.cache, admin.writer, None, admin.purgatory, admin, admin, admin.audit,
                            None)  # no election (nothing moves) and nothing logged here
    outcomes = asyncio.run(writes.alter(changes, validate_only, incremental, CALLER))
    return [(o.name, o.error_code, o.error_message) for o in outcomes]


def test_incremental_checks_operations_before_existence():
    admin = FakeAdmin()
    got = run(admin, [C.ResourceChange(2, "gone", [C.AlterOp("retention.ms", "1", C.APPEND)]),
                      C.ResourceChange(2, "gone2", [C.AlterOp("retention.ms", "1", C.SET)])])
    assert got == [("gone", 40, "Config value append is not allowed for config key: retention.ms"),
                   ("gone2", 3, "The topic 'gone2' does not exist.")]
    assert admin.writer.writes == [] and [e["error_code"] for e in admin.audit.events] == [40, 3]


def test_topic_write_is_the_whole_config_and_a_notification():
    admin = FakeAdmin()
    assert run(admin, [C.ResourceChange(2, "t", [C.AlterOp("cleanup.policy", "compact", C.APPEND)])]) == [
        ("t", 0, None)]
    (ops,) = admin.writer.writes
    assert (ops[0].kind, ops[0].path) == ("set", "/config/topics/t")
    assert json.loads(ops[0].data) == {"version": 1,
                                       "config": {"retention.ms": "1", "cleanup.policy": "delete,compact"}}
    assert (ops[1].kind, ops[1].path, ops[1].sequence) == ("create", "/config/changes/config_change_", True)
    assert json.loads(ops[1].data) == {"version": 2, "entity_path": "topics/t"}
    assert admin.cluster_waits == [["0"]]
    assert admin.checked == [("MODIFY", "t", {"retention.ms": "1"},
                              {"retention.ms": "1", "cleanup.policy": "delete,compact"}, False,
                              {"requested_configs": {"cleanup.policy": "compact"}})]


def test_broker_config_node_is_created_when_missing_and_validate_only_writes_nothing():
    admin = FakeAdmin(missing={"/config/brokers/<default>"})
    change = C.ResourceChange(4, "", [C.AlterOp("log.retention.ms", "5", C.SET)])
    assert run(admin, [change], validate_only=True) == [("", 0, None)]
    assert admin.writer.writes == []
    assert run(admin, [change]) == [("", 0, None)]
    (ops,) = admin.writer.writes
    assert (ops[0].kind, ops[0].path) == ("create", "/config/brokers/<default>")
    assert json.loads(ops[1].data) == {"version": 2, "entity_path": "brokers/<default>"}


def test_legacy_bad_value_message_names_the_resource():
    admin = FakeAdmin()
    got = run(admin, [C.ResourceChange(2, "t", [C.AlterOp("segment.bytes", "1")]),
                      C.ResourceChange(2, "t2", [C.AlterOp("x", "1")]),
                      C.ResourceChange(8, "1", [C.AlterOp("root", "INFO")])], incremental=False)
    assert got[0] == ("t", 40, "Invalid config value for resource ConfigResource(type=TOPIC, name='t'): "
                               "Invalid value 1 for configuration segment.bytes: Value must be at least 14")
    assert got[1] == ("t2", 3, "The topic 't2' does not exist.")
    assert got[2] == ("1", 42, "Unknown resource type 8")


def test_broker_logger_changes():
    admin = FakeAdmin()
    cases = [("1", "kafka.server", C.SET, "DEBUG"), ("1", "root", C.SET, "LOUD"), ("1", "root", C.DELETE, None),
             ("1", "root", C.APPEND, "x"), ("1", "root", 5, "x"), ("2", "root", C.SET, "INFO")]
    got = [run(admin, [C.ResourceChange(8, broker, [C.AlterOp(n, v, op)])])[0][1:] for broker, n, op, v in cases]
    assert got == [
        (40, "Logger kafka.server does not exist!"),
        (40, "Cannot set the log level of root to LOUD as it is not a supported log level. "
             "Valid log levels are TRACE, ERROR, INFO, FATAL, DEBUG, WARN"),
        (42, "Removing the log level of the root logger is not allowed"),
        (42, "APPEND operation is not allowed for the BROKER_LOGGER resource"),
        (42, "Unknown operation type 5 is not allowed for the BROKER_LOGGER resource"),
        (42, "Unexpected broker id, expected 1, but received 2")]
    try:
        assert run(admin, [C.ResourceChange(8, "1", [C.AlterOp("root", "DEBUG", C.SET)])]) == [("1", 0, None)]
        assert bc.loggers("INFO") == {"root": "DEBUG"} and admin.writer.writes == []
    finally:
        bc.logger_levels.clear()
