"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs against the shared cluster, with real clients
(confluent-kafka, kafka-python) and fauxka's own client for exact codes and messages."""

import asyncio
import json

import pytest
import structlog
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.harness import wait_for
from tests.unit.policy_fixtures import RECORD_FILE, read_records
from fauxka.zkstore import ZkStore

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SET, DELETE, APPEND, SUBTRACT = (AlterConfigOpType[op] for op in ("SET", "DELETE", "APPEND", "SUBTRACT"))
FIXTURES = "tests.unit.policy_fixtures"
pytestmark = pytest.mark.filterwarnings("ignore:alter_configs has been deprecated")


@pytest.fixture(scope="module")
def controller(cluster):
    return cluster.controller_address()


@pytest.fixture(scope="module")
def admin(controller):  # admin writes go to the controller until forwarding exists
    return AdminClient({"bootstrap.servers": controller})


def new_topic(controller, configs=None) -> str:
    name = unique("cfg")
    assert create_topics(controller, [topic_spec(name, 1, 1, configs=configs)])[0].error_code == 0
    return name


def describe(admin, name, resource_type="topic") -> dict:
    resource = ConfigResource(resource_type, name)
    return admin.describe_configs([resource])[resource].result(timeout=10)


def alter(admin, name, configs, validate_only=False):
    resource = ConfigResource("topic", name, set_config=configs)
    return admin.alter_configs([resource], validate_only=validate_only)[resource].result(timeout=10)


def incremental(admin, name, *ops, resource_type="topic", validate_only=False):  # ops: (name, value, op type)
    resource = ConfigResource(resource_type, name,
                              incremental_configs=[ConfigEntry(k, v, incremental_operation=op) for k, v, op in ops])
    return admin.incremental_alter_configs([resource], validate_only=validate_only)[resource].result(timeout=10)


def raw_alter(address, resources, validate_only=False, incremental_api=False, version=None):
    """[(resource_type, name, code, message)] through fauxka's client. Incremental configs: (name, op, value)."""
    def configs(given):
        if incremental_api:
            return [{"name": k, "config_operation": op, "value": v} for k, op, v in given]
        return [{"name": k, "value": v} for k, v in given.items()]
    values = {"resources": [{"resource_type": t, "resource_name": n, "configs": configs(c)} for t, n, c in resources],
              "validate_only": validate_only}
    key, newest = (44, 1) if incremental_api else (33, 2)
    response = send(address, key, newest if version is None else version, values)
    return [(r.resource_type, r.resource_name, int(r.error_code), r.error_message) for r in response.responses]


def raw_describe(address, resources, version=4, documentation=True):
    resources = [{"resource_type": t, "resource_name": n, "configuration_keys": keys} for t, n, keys in resources]
    values = {"resources": resources, "include_synonyms": True, "include_documentation": documentation}
    return list(send(address, 32, version, values).results)


def described(address, resource_type, name, keys=None, version=4) -> list[tuple]:
    """[(name, value, source)] of one resource as the broker at `address` describes it."""
    (result,) = raw_describe(address, [(resource_type, name, keys)], version, documentation=version >= 3)
    return [(c.name, c.value, c.config_source) for c in result.configs]


def zk_children(cluster, path) -> set[str]:
    async def read():
        store = ZkStore(cluster.zk_connect, 10000, structlog.get_logger())
        await store.start(10)
        try:
            return set(await store.get_children(path) or ())
        finally:
            await store.stop()
    return asyncio.run(read())


def zk_config(cluster, path):
    return None if (data := cluster.zk_get(path)) is None else json.loads(data)


# --- topics ----------------------------------------------------------------------------------------------

def test_alter_then_describe_round_trip_writes_znode_and_notification(cluster, controller, admin):
    topic = new_topic(controller)
    before = zk_children(cluster, "/config/changes")
    alter(admin, topic, {"retention.ms": "3600000", "cleanup.policy": "compact"})
    configs = describe(admin, topic)
    assert (configs["retention.ms"].value, configs["cleanup.policy"].value) == ("3600000", "compact")
    assert configs["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
    assert not configs["retention.ms"].is_read_only and not configs["retention.ms"].is_sensitive
    assert zk_config(cluster, f"/config/topics/{topic}") == {
        "version": 1, "config": {"retention.ms": "3600000", "cleanup.policy": "compact"}}
    added = zk_children(cluster, "/config/changes") - before
    assert all(c.startswith("config_change_") for c in added)
    assert {"version": 2, "entity_path": f"topics/{topic}"} in [zk_config(cluster, f"/config/changes/{c}")
                                                                for c in added]
    # AlterConfigs replaces the whole set: what is not named goes back to its default
    alter(admin, topic, {"retention.ms": "7200000"})
    configs = describe(admin, topic)
    assert configs["retention.ms"].value == "7200000" and configs["cleanup.policy"].value == "delete"
    assert configs["cleanup.policy"].source == ConfigSource.DEFAULT_CONFIG.value
    for broker_id in cluster.brokers:  # every broker's cache follows
        wait_for(lambda a=cluster.address_of(broker_id): described(a, TOPIC, topic, ["retention.ms"]) == [
            ("retention.ms", "7200000", 1)], 5, what=f"broker {broker_id} showing the new config")


def test_validate_only_writes_nothing_and_everything_is_audited(cluster, controller, admin):
    topic = new_topic(controller, {"retention.ms": "1000"})
    alter(admin, topic, {"retention.ms": "2000"}, validate_only=True)
    incremental(admin, topic, ("retention.ms", "3000", SET), validate_only=True)
    assert zk_config(cluster, f"/config/topics/{topic}")["config"] == {"retention.ms": "1000"}
    assert describe(admin, topic)["retention.ms"].value == "1000"
    assert raw_alter(controller, [(TOPIC, topic, {"retention.ms": "x"})], validate_only=True)[0][2] == 40
    events = [e for e in cluster.audit_events() if e["resource_name"] == topic and "CONFIGS" in e["action"]]
    assert [(e["action"], e["resource_type"], e["validate_only"], e["error_code"]) for e in events] == [
        ("ALTER_CONFIGS", "TOPIC", True, 0), ("INCREMENTAL_ALTER_CONFIGS", "TOPIC", True, 0),
        ("ALTER_CONFIGS", "TOPIC", True, 40)]
    assert events[1]["configs"] == [{"name": "retention.ms", "value": "3000", "op": "SET"}]
    assert events[1]["api"] == "incremental_alter_configs"


def test_errors(controller, admin):
    topic, missing = new_topic(controller), unique("missing")
    assert raw_alter(controller, [(TOPIC, missing, {"retention.ms": "1"}), (TOPIC, topic, {"retention.ms": "soon"}),
                                  (TOPIC, "", {"retention.ms": "1"})]) == [
        (TOPIC, missing, 3, f"The topic '{missing}' does not exist."),
        (TOPIC, topic, 40, f"Invalid config value for resource ConfigResource(type=TOPIC, name='{topic}'): "
                           "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        (TOPIC, "", 42, "Default topic resources are not allowed.")]
    assert raw_alter(controller, [(TOPIC, topic, [("no.such.key", 0, "1")])], incremental_api=True) == [
        (TOPIC, topic, 40, "Unknown topic config name: no.such.key")]
    with pytest.raises(KafkaException) as raised:
        alter(admin, topic, {"min.insync.replicas": "0"})
    assert raised.value.args[0].code() == 40
    assert "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1" in str(raised.value)
    # request-level checks: repeated resources, unknown resource types, repeated keys, null values
    got = raw_alter(controller, [(TOPIC, topic, {"retention.ms": "1"}), (TOPIC, topic, {"retention.ms": "2"}),
                                 (99, "x", {"a": "b"})])
    assert [g[2:] for g in got] == [(42, "Each resource must appear at most once.")] * 2 + [
        (42, "Unknown resource type 99")]
    got = raw_alter(controller, [(TOPIC, topic, [("retention.ms", 0, "1"), ("retention.ms", 1, None)]),
                                 (TOPIC, unique(), [("retention.ms", 0, None), ("segment.ms", 1, None)])],
                    incremental_api=True)
    assert [g[2:] for g in got] == [(42, "Error due to duplicate config keys"),
                                    (42, "Null value not supported for : retention.ms")]


def test_append_subtract_and_delete(cluster, controller, admin):
    topic = new_topic(controller)
    incremental(admin, topic, ("cleanup.policy", "compact", APPEND))
    assert describe(admin, topic)["cleanup.policy"].value == "delete,compact"
    incremental(admin, topic, ("cleanup.policy", "delete", SUBTRACT), ("retention.ms", "60000", SET))
    assert zk_config(cluster, f"/config/topics/{topic}")["config"] == {"cleanup.policy": "compact",
                                                                        "retention.ms": "60000"}
    incremental(admin, topic, ("retention.ms", None, DELETE))
    configs = describe(admin, topic)
    assert (configs["retention.ms"].value, configs["retention.ms"].source, configs["cleanup.policy"].value) == (
        "604800000", 5, "compact")
    got = raw_alter(controller, [(TOPIC, topic, [("retention.ms", 2, "1")]),
                                 (TOPIC, unique(), [("no.such.key", 3, "1")])], incremental_api=True)
    assert [g[2:] for g in got] == [(40, "Config value append is not allowed for config key: retention.ms"),
                                    (-1, None)]


# --- brokers ----------------------------------------------------------------------------------------------

def test_broker_dynamic_configs_per_broker_and_cluster_default(cluster, controller, admin):
    me, key = str(cluster.controller_id()), "log.cleaner.delete.retention.ms"
    default_key = "log.segment.delete.delay.ms"
    try:
        incremental(admin, me, (key, "1234", SET), resource_type="broker")
        assert zk_config(cluster, f"/config/brokers/{me}")["config"] == {key: "1234"}
        configs = describe(admin, me, "broker")
        assert (configs[key].value, configs[key].source) == ("1234", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
        broker_id = configs["broker.id"]
        assert (broker_id.value, broker_id.is_read_only, broker_id.source) == (me, True, 4)  # STATIC_BROKER_CONFIG
        # a topic now inherits the value, with the broker key as its first synonym
        (config,) = raw_describe(controller, [(TOPIC, new_topic(controller), ["delete.retention.ms"])])[0].configs
        assert (config.value, config.config_source) == ("1234", 2)
        assert (config.synonyms[0].name, config.synonyms[0].value, config.synonyms[0].source) == (key, "1234", 2)
        # the cluster-wide default (resource name ""), described by every broker
        assert raw_alter(controller, [(BROKER, "", [(default_key, 0, "90000")])], incremental_api=True) == [
            (BROKER, "", 0, None)]
        assert zk_config(cluster, "/config/brokers/<default>")["config"] == {default_key: "90000"}
        for broker_id in cluster.brokers:
            assert wait_for(lambda a=cluster.address_of(broker_id): described(a, BROKER, ""), 5) == [
                (default_key, "90000", 3)]
    finally:
        incremental(admin, me, (key, None, DELETE), resource_type="broker")
        raw_alter(controller, [(BROKER, "", [(default_key, 1, None)])], incremental_api=True)
    assert describe(admin, me, "broker")[key].source == ConfigSource.DEFAULT_CONFIG.value


def test_broker_errors(cluster, controller):
    me, other = cluster.controller_id(), next(i for i in cluster.brokers if i != cluster.controller_id())
    for resource, expected in [
        ((BROKER, str(other), {"log.retention.ms": "1"}), f"Unexpected broker id, expected {me}, but received {other}"),
        ((BROKER, "abc", {"log.retention.ms": "1"}), "Node id must be an integer, but it is: abc"),
        ((BROKER, str(me), {"log.retention.hours": "1"}),
         "Cannot update these configs dynamically: Set(log.retention.hours)"),
        ((BROKER_LOGGER, str(me), {"root": "INFO"}), "Unknown resource type 8"),
    ]:
        assert raw_alter(controller, [resource])[0][2:] == (42, expected)
    assert raw_alter(controller, [(BROKER, str(me), [("log.retention.ms", 2, "1")])], incremental_api=True)[0][2:] == (
        40, "Config value append is not allowed for config key: log.retention.ms")
    assert zk_config(cluster, f"/config/brokers/{me}") in (None, {"version": 1, "config": {}})


def test_describe_errors_versions_and_broker_loggers(cluster):
    me = cluster.controller_id()
    other, address = next(i for i in cluster.brokers if i != me), cluster.address_of(me)
    results = raw_describe(address, [(BROKER, str(other), None), (BROKER, "x", None), (BROKER_LOGGER, "", None),
                                     (BROKER_LOGGER, str(me), None), (TOPIC, unique(), None), (TOPIC, "a/b", None)])
    assert [(int(r.error_code), r.error_message) for r in results] == [
        (42, f"Unexpected broker id, expected {me} or empty string, but received {other}"),
        (42, "Broker id must be an integer, but it is: x"), (42, "Broker id must not be empty"), (0, ""), (3, ""),
        (17, "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, "
             "'.', '_' and '-'")]
    assert [(c.name, c.value, c.config_source) for c in results[3].configs] == [("root", "INFO", 6)]
    for version in (1, 2, 3, 4):
        assert described(address, BROKER, str(me), ["broker.id"], version) == [("broker.id", str(me), 4)]
    assert raw_alter(address, [(BROKER_LOGGER, str(me), [("root", 0, "INFO")]), (BROKER_LOGGER, "", [])],
                     incremental_api=True) == [(BROKER_LOGGER, str(me), 0, None),
                                               (BROKER_LOGGER, "", 42, "Node id must be an integer, but it is: ")]


# --- policies, clients, audit, controller-only ---------------------------------------------------------------

def test_legacy_alter_config_policy_refuses_topics_and_brokers_also_for_validate_only(make_cluster):
    private = make_cluster(1, {"alter.config.policy.class.name": f"{FIXTURES}:RejectAllAlterConfigs"})
    address = private.controller_address()
    topic = new_topic(address)
    for validate_only in (True, False):
        got = raw_alter(address, [(TOPIC, topic, {"retention.ms": "1"}), (BROKER, "1", {"log.retention.ms": "1"}),
                                  (BROKER, "", {"log.retention.ms": "1"})], validate_only=validate_only)
        assert [(g[1], g[2], g[3]) for g in got] == [(n, 44, f"no config changes today ({t} '{n}')")
                                                     for t, n in (("TOPIC", topic), ("BROKER", "1"), ("BROKER", ""))]
    assert (private.zk_get(f"/config/topics/{topic}"), private.zk_get("/config/brokers/1")) == (
        b'{"version":1,"config":{}}', None)


def test_topic_actions_policy_sees_a_modify_and_cluster_blocking(make_cluster, tmp_path):
    record = tmp_path / "policy.jsonl"
    private = make_cluster(2, {"topic.actions.policy.class.name": f"{FIXTURES}:RecordingTopicActions",
                               RECORD_FILE: str(record), "fauxka.admin.blocking": "cluster"})
    address, other = private.controller_address(), private.non_controller_address()
    topic = new_topic(address, {"retention.ms": "1000"})
    assert raw_alter(address, [(TOPIC, topic, [("retention.ms", 1, None), ("cleanup.policy", 2, "compact")])],
                     incremental_api=True, validate_only=True) == [(TOPIC, topic, 0, None)]
    (modify,) = [r for r in read_records(record) if r["action"] == "MODIFY"]
    assert modify["validate_only"] is True and modify["post_state"]["num_partitions"] == 1
    assert modify["requested_configs"] == {"retention.ms": None, "cleanup.policy": "compact"}
    assert modify["pre_state"]["configs"] == {"retention.ms": "1000"}
    assert modify["post_state"]["configs"] == {"cleanup.policy": "delete,compact"}
    assert raw_alter(address, [(TOPIC, topic, {"retention.ms": "5"}), (BROKER, "", {"log.retention.ms": "6"})]) == [
        (TOPIC, topic, 0, None), (BROKER, "", 0, None)]  # blocking=cluster: every broker knows at once
    assert described(other, TOPIC, topic, ["retention.ms"]) == [("retention.ms", "5", 1)]
    assert described(other, BROKER, "") == [("log.retention.ms", "6", 3)]


def test_kafka_python_describes_and_alters(cluster, controller):
    from kafka.admin import ConfigResource as Resource, ConfigResourceType as Type, KafkaAdminClient
    topic, me = new_topic(controller, {"retention.ms": "5000"}), str(cluster.controller_id())
    key = "log.cleaner.min.compaction.lag.ms"
    client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    try:
        topics = [Resource(Type.TOPIC, topic)]  # any broker answers: wait until its cache has the topic
        got = wait_for(lambda: client.describe_configs(topics)["topic"][topic].get("retention.ms"), 5)
        assert (got["value"], got["config_source"]) == ("5000", "DYNAMIC_TOPIC_CONFIG")
        try:  # a broker resource goes to that broker: the controller's own id works
            assert client.alter_configs([Resource(Type.BROKER, me, configs={key: "5"})]) == {"broker": {me: "OK"}}
            assert client.describe_configs([Resource(Type.BROKER, me)])["broker"][me][key]["value"] == "5"
        finally:
            client.reset_configs([Resource(Type.BROKER, me, configs={key: None})])
    finally:
        client.close()


def test_a_non_controller_forwards_and_answers_as_the_controller(cluster):
    other, controller, topic = cluster.non_controller_address(), cluster.controller_address(), unique()
    request = [(TOPIC, topic, {"retention.ms": "1"})]
    assert raw_alter(other, request) == raw_alter(controller, request) == [
        (TOPIC, topic, 3, f"The topic '{topic}' does not exist.")]
    for version in (0, 1):
        incremental = [(TOPIC, topic, [("retention.ms", 0, "1")])]
        assert raw_alter(other, incremental, incremental_api=True, version=version) == raw_alter(
            controller, incremental, incremental_api=True, version=version)

def test_broker_resource_altered_through_the_broker_it_names_that_is_not_the_controller(cluster):
    """librdkafka sends a BROKER resource's AlterConfigs / IncrementalAlterConfigs to the broker it
    names, which forwards it to the controller: the id is checked where the client sent it (Kafka's
    ConfigAdminManager.preprocess), never again on the forwarded request. BROKER_LOGGER changes are
    the receiving broker's own log levels."""
    me = cluster.controller_id()
    other = next(i for i in cluster.brokers if i != me)
    key, name = "log.cleaner.delete.retention.ms", str(other)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    try:
        assert incremental(admin, name, (key, "4321", SET), resource_type="broker") is None
        assert zk_config(cluster, f"/config/brokers/{other}")["config"] == {key: "4321"}
        assert wait_for(lambda: (describe(admin, name, "broker")[key].value == "4321") or None, 10)
        resource = ConfigResource("broker", name, set_config={key: "5678"})  # the legacy AlterConfigs
        assert admin.alter_configs([resource])[resource].result(timeout=10) is None
        assert zk_config(cluster, f"/config/brokers/{other}")["config"] == {key: "5678"}
        # sent to broker `other` but naming the controller: refused there, with the receiving broker's id
        assert raw_alter(cluster.address_of(other), [(BROKER, str(me), [(key, 0, "1")])], incremental_api=True) == [
            (BROKER, str(me), 42, f"Unexpected broker id, expected {other}, but received {me}")]
        assert raw_alter(cluster.address_of(other), [(BROKER, str(me), {key: "1"})]) == [
            (BROKER, str(me), 42, f"Unexpected broker id, expected {other}, but received {me}")]
        # the logger level of `other` changes, and only there (confluent-kafka has no BROKER_LOGGER type)
        assert raw_alter(cluster.address_of(other), [(BROKER_LOGGER, name, [("root", 0, "DEBUG")])],
                         incremental_api=True) == [(BROKER_LOGGER, name, 0, None)]
        assert described(cluster.address_of(other), BROKER_LOGGER, name) == [("root", "DEBUG", 6)]
        assert described(cluster.controller_address(), BROKER_LOGGER, str(me)) == [("root", "INFO", 6)]
    finally:
        raw_alter(cluster.address_of(other), [(BROKER_LOGGER, name, [("root", 0, "INFO")])], incremental_api=True)
        incremental(admin, name, (key, None, DELETE), resource_type="broker")


# Kafka 3.9 lists a topic's entries in the order of a Scala 2.13 mutable.HashMap of LogConfig's 36
# keys (64 buckets); a configuration_keys filter builds a new map of the kept ones (16 buckets).
TOPIC_ORDER_HEAD = ["compression.type", "leader.replication.throttled.replicas", "message.downconversion.enable",
                    "min.insync.replicas", "segment.jitter.ms", "cleanup.policy", "flush.ms"]


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_describe_configs_order_and_empty_error_message_as_kafka_3_9(cluster, controller, version):
    """kafkajs's spec encodes Kafka 2.4 (null error_message, another order); Kafka 3.9 answers a
    success with the generated default "" and entries in its Scala hash map's order."""
    topic = new_topic(controller)
    me = str(cluster.controller_id())
    whole, some, broker = raw_describe(controller, [
        (TOPIC, topic, None),
        (TOPIC, topic, ["retention.ms", "cleanup.policy", "segment.bytes", "min.insync.replicas"]),
        (BROKER, me, ["log.flush.interval.ms", "min.insync.replicas", "log.flush.interval.messages"])],
        version, documentation=version >= 3)
    assert [(int(r.error_code), r.error_message) for r in (whole, some, broker)] == [(0, "")] * 3
    assert [c.name for c in whole.configs][:len(TOPIC_ORDER_HEAD)] == TOPIC_ORDER_HEAD
    assert [c.name for c in some.configs] == ["cleanup.policy", "min.insync.replicas", "segment.bytes", "retention.ms"]
    assert [c.name for c in broker.configs] == ["log.flush.interval.messages", "log.flush.interval.ms",
                                               "min.insync.replicas"]
