import json

import pytest

from fauxka.controller.policy import (
    AlterConfigRequest,
    CreateTopicRequest,
    LegacyAlterConfigAdapter,
    LegacyCreateTopicAdapter,
    PolicyConfigError,
    PolicyViolation,
    TopicAction,
    TopicActionRequest,
    TopicState,
    error_for,
    load_policies,
)
from fauxka.controller.rules_policy import RulesPolicy
from fauxka.model.errors import ErrorCode
from tests.unit import policy_fixtures as fx

F = "tests.unit.policy_fixtures"
CREATE_KEY, ALTER_KEY, ACTIONS_KEY = (
    "create.topic.policy.class.name", "alter.config.policy.class.name", "topic.actions.policy.class.name")


def state(partitions=3, rf=2, configs=None):
    return TopicState.of({p: list(range(1, rf + 1)) for p in range(partitions)}, configs or {})


def req(action=TopicAction.CREATE, topic="t", principal="User:bob", pre=None, post=None, **kw):
    return TopicActionRequest(action, topic, principal, "10.0.0.1", pre, post, False, **kw)


@pytest.fixture(autouse=True)
def _reset():
    fx.CapturingCreatePolicy.instances.clear()
    fx.CapturingAlterConfigPolicy.instances.clear()


# --- loading -----------------------------------------------------------------------------------


def test_no_policy_is_empty():
    policies = load_policies({"broker.id": "1", CREATE_KEY: "  "})
    assert policies.empty and not policies.has_create and not policies.has_broker_configs
    policies.validate_topic(req(post=state()))
    policies.validate_broker_configs("1", {"a": "b"})


@pytest.mark.parametrize("path", [f"{F}:CapturingCreatePolicy", f"{F}.CapturingCreatePolicy"])
def test_load_by_both_spellings_and_configure_gets_every_config(path):
    configs = {"broker.id": "1", CREATE_KEY: path, "fauxka.policy.x": "y"}
    policies = load_policies(configs)
    (policy,) = fx.CapturingCreatePolicy.instances
    assert policy.configs == configs
    assert policies.has_create and not policies.empty
    assert not policies.has_delete and not policies.has_partition_modify and not policies.has_config_modify
    policies.close()
    assert policy.closed


def test_rules_policy_loads_by_its_documented_name():
    policies = load_policies({ACTIONS_KEY: "fauxka.controller.rules_policy:RulesPolicy"})
    assert isinstance(policies.topic_policies[0], RulesPolicy)
    assert policies.has_create and policies.has_delete and policies.has_partition_modify
    assert not policies.has_broker_configs


@pytest.mark.parametrize("legacy", [[CREATE_KEY], [ALTER_KEY], [CREATE_KEY, ALTER_KEY]])
def test_actions_policy_conflicts_with_legacy_keys(legacy):
    configs = {ACTIONS_KEY: f"{F}:OnlyAlice", **{k: f"{F}:RejectAllCreates" for k in legacy}}
    with pytest.raises(PolicyConfigError) as e:
        load_policies(configs)
    assert ACTIONS_KEY in str(e.value)
    for k in legacy:
        assert k in str(e.value)


@pytest.mark.parametrize("key,value,words", [
    (CREATE_KEY, "no.such.module:Policy", "cannot be loaded"),
    (CREATE_KEY, f"{F}:NoSuchClass", "no attribute"),
    (CREATE_KEY, "NoDots", "cannot be loaded"),
    (CREATE_KEY, f"{F}:OnlyAlice", "not a subclass of fauxka.controller.policy.CreateTopicPolicy"),
    (ALTER_KEY, f"{F}:RejectAllCreates", "not a subclass of fauxka.controller.policy.AlterConfigPolicy"),
    (ACTIONS_KEY, f"{F}:NotAPolicy", "not a subclass of fauxka.controller.policy.TopicActionsPolicy"),
    (ACTIONS_KEY, f"{F}:RECORD_FILE", "not a subclass"),
    (ACTIONS_KEY, f"{F}:ConfigureFails", "configure() failed"),
])
def test_bad_class_names_key_and_value(key, value, words):
    with pytest.raises(PolicyConfigError) as e:
        load_policies({key: value})
    assert key in str(e.value) and value in str(e.value) and words in str(e.value)


def test_failed_load_closes_what_was_loaded():
    with pytest.raises(PolicyConfigError):
        load_policies({CREATE_KEY: f"{F}:CapturingCreatePolicy", ALTER_KEY: "no.such:Thing"})
    assert fx.CapturingCreatePolicy.instances[0].closed


def test_policy_config_error_from_configure_passes_through():
    with pytest.raises(PolicyConfigError, match="needs fauxka.policy.record.file"):
        load_policies({ACTIONS_KEY: f"{F}:RecordingTopicActions"})


def test_close_swallows_and_reports_errors_once():
    policies = load_policies({ACTIONS_KEY: f"{F}:CloseFails"})
    errors = policies.close()
    assert [type(e) for e in errors] == [OSError]
    assert policies.close() == []


# --- legacy adapters: Kafka's calls --------------------------------------------------------------


def test_create_adapter_counts_with_null_assignment():
    policies = load_policies({CREATE_KEY: f"{F}:CapturingCreatePolicy"})
    # the client sent -1/-1: post_state carries the resolved broker defaults
    policies.validate_topic(req(post=state(3, 2, {"retention.ms": "1000"})))
    (policy,) = fx.CapturingCreatePolicy.instances
    assert policy.requests == [CreateTopicRequest("t", 3, 2, None, {"retention.ms": "1000"})]


def test_create_adapter_manual_assignment_with_null_counts():
    policies = load_policies({CREATE_KEY: f"{F}:CapturingCreatePolicy"})
    post = TopicState.of({0: [1, 2], 1: [2, 3]}, {"a": "b"})
    policies.validate_topic(req(post=post, manual_assignment=True, requested_configs={"a": "b"}))
    assert fx.CapturingCreatePolicy.instances[0].requests == [
        CreateTopicRequest("t", None, None, {0: [1, 2], 1: [2, 3]}, {"a": "b"})]


def test_create_adapter_ignores_modify_and_delete():
    adapter = LegacyCreateTopicAdapter(fx.RejectAllCreates())
    adapter.validate(req(TopicAction.MODIFY, pre=state(), post=state(6), requested_configs={"a": "b"}))
    adapter.validate(req(TopicAction.DELETE, pre=state()))
    with pytest.raises(PolicyViolation) as e:
        adapter.validate(req(post=state()))
    assert e.value.message == "no topics today"


def test_alter_config_adapter_sees_requested_entries_only():
    policies = load_policies({ALTER_KEY: f"{F}:CapturingAlterConfigPolicy"})
    assert policies.has_config_modify and policies.has_broker_configs and not policies.has_create
    pre, post = state(configs={"a": "1", "b": "2"}), state(configs={"a": "1"})
    policies.validate_topic(req(TopicAction.MODIFY, pre=pre, post=post, requested_configs={"b": None}))
    policies.validate_topic(req(post=state()))  # CREATE: not an alter-config call
    policies.validate_topic(req(TopicAction.MODIFY, pre=state(3), post=state(6)))  # CreatePartitions
    policies.validate_topic(req(TopicAction.DELETE, pre=state()))
    policies.validate_broker_configs("", {"log.cleaner.threads": "2"})
    policies.validate_broker_configs("1", {"x": "y"})
    assert fx.CapturingAlterConfigPolicy.instances[0].requests == [
        AlterConfigRequest("TOPIC", "t", {"b": None}),
        AlterConfigRequest("BROKER", "", {"log.cleaner.threads": "2"}),
        AlterConfigRequest("BROKER", "1", {"x": "y"}),
    ]


def test_alter_config_rejection():
    adapter = LegacyAlterConfigAdapter(fx.RejectAllAlterConfigs())
    with pytest.raises(PolicyViolation, match="no config changes today"):
        adapter.validate(req(TopicAction.MODIFY, pre=state(), post=state(), requested_configs={}))


def test_actions_policy_never_sees_broker_configs():
    policies = load_policies({ACTIONS_KEY: f"{F}:CrashingPolicy"})
    policies.validate_broker_configs("1", {"a": "b"})


def test_violation_and_crash_propagate_distinctly():
    crashing = load_policies({ACTIONS_KEY: f"{F}:CrashingPolicy"})
    with pytest.raises(RuntimeError) as crash:
        crashing.validate_topic(req(post=state()))
    assert error_for(crash.value) == (ErrorCode.unknown_server_error, None)
    legacy = load_policies({CREATE_KEY: f"{F}:CrashingCreatePolicy"})
    with pytest.raises(RuntimeError):
        legacy.validate_topic(req(post=state()))
    rejecting = load_policies({CREATE_KEY: f"{F}:RejectAllCreates"})
    with pytest.raises(PolicyViolation) as violation:
        rejecting.validate_topic(req(post=state()))
    assert error_for(violation.value) == (ErrorCode.policy_violation, "no topics today")
    assert error_for(PolicyViolation()) == (ErrorCode.policy_violation, None)


def test_only_alice():
    policies = load_policies({ACTIONS_KEY: f"{F}:OnlyAlice"})
    policies.validate_topic(req(principal="User:alice", post=state()))
    with pytest.raises(PolicyViolation, match="only User:alice may DELETE topics, not User:bob"):
        policies.validate_topic(req(TopicAction.DELETE, pre=state()))


def test_recording_policy_writes_json_lines(tmp_path):
    path = tmp_path / "record.jsonl"
    policies = load_policies({ACTIONS_KEY: f"{F}:RecordingTopicActions", fx.RECORD_FILE: str(path)})
    policies.validate_topic(req(post=state(2, 1, {"a": "b"})))
    policies.validate_topic(req(TopicAction.DELETE, principal="User:alice", pre=state(1, 1)))
    first, second = fx.read_records(path)
    assert first["action"] == "CREATE" and first["pre_state"] is None and first["principal"] == "User:bob"
    assert first["post_state"] == {"num_partitions": 2, "replication_factor": 1,
                                   "replica_assignments": {"0": [1], "1": [1]}, "configs": {"a": "b"}}
    assert second["action"] == "DELETE" and second["post_state"] is None and second["principal"] == "User:alice"
    assert json.loads(path.read_text().splitlines()[1]) == second


def test_topic_state_of():
    s = TopicState.of({1: [3, 1], 0: [1, 2]}, {"k": "v"})
    assert (s.num_partitions, s.replication_factor, list(s.replica_assignments)) == (2, 2, [0, 1])
    assert TopicState.of({}, {}).replication_factor == 0


# --- RulesPolicy ---------------------------------------------------------------------------------


def rules(**rules_):
    policy = RulesPolicy()
    policy.configure({"broker.id": "1", **{"fauxka.policy." + k.replace("_", "."): v for k, v in rules_.items()}})
    return policy


def refused(policy, request, message):
    with pytest.raises(PolicyViolation) as e:
        policy.validate(request)
    assert e.value.message == message


def test_rules_replication_and_partitions():
    policy = rules(min_replication_factor="2", max_replication_factor="3", max_partitions="10")
    policy.validate(req(post=state(10, 2)))
    refused(policy, req(topic="x", post=state(12, 2)),
            "Rule fauxka.policy.max.partitions: topic 'x' would have 12 partitions, more than 10.")
    refused(policy, req(post=state(1, 1)),
            "Rule fauxka.policy.min.replication.factor: topic 't' would have replication factor 1, less than 2.")
    refused(policy, req(post=state(1, 4)),
            "Rule fauxka.policy.max.replication.factor: topic 't' would have replication factor 4, more than 3.")
    # MODIFY: only what changes; an old 1-replica topic may still grow to 10 partitions, not 11
    policy.validate(req(TopicAction.MODIFY, pre=state(3, 1), post=state(10, 1)))
    refused(policy, req(TopicAction.MODIFY, pre=state(3, 2), post=state(11, 2)),
            "Rule fauxka.policy.max.partitions: topic 't' would have 11 partitions, more than 10.")
    policy.validate(req(TopicAction.MODIFY, pre=state(20, 1, {"a": "1"}), post=state(20, 1, {"a": "2"}),
                        requested_configs={"a": "2"}))


def test_rules_topic_name_pattern():
    policy = rules(topic_name_pattern="[a-z]+-v[0-9]+")
    policy.validate(req(topic="orders-v1", post=state()))
    refused(policy, req(topic="orders-v1x", post=state()),
            "Rule fauxka.policy.topic.name.pattern: topic name 'orders-v1x' does not match '[a-z]+-v[0-9]+'.")
    policy.validate(req(TopicAction.MODIFY, topic="Legacy", pre=state(1), post=state(2)))


def test_rules_required_and_allowed_configs():
    policy = rules(required_configs="retention.ms, cleanup.policy", allowed_configs="retention.ms,cleanup.policy")
    policy.validate(req(post=state(configs={"retention.ms": "1", "cleanup.policy": "delete"})))
    refused(policy, req(post=state(configs={})),
            "Rule fauxka.policy.required.configs: topic 't' must set cleanup.policy, retention.ms.")
    refused(policy, req(post=state(configs={"retention.ms": "1", "cleanup.policy": "delete", "segment.ms": "9"})),
            "Rule fauxka.policy.allowed.configs: topic 't' may not set segment.ms "
            "(allowed: retention.ms, cleanup.policy).")
    # MODIFY: removing a required config is refused, an old topic lacking one is not locked
    refused(policy, req(TopicAction.MODIFY, pre=state(configs={"retention.ms": "1", "cleanup.policy": "delete"}),
                        post=state(configs={"retention.ms": "1"}), requested_configs={"cleanup.policy": None}),
            "Rule fauxka.policy.required.configs: topic 't' must set cleanup.policy.")
    policy.validate(req(TopicAction.MODIFY, pre=state(configs={"segment.ms": "9"}),
                        post=state(configs={"segment.ms": "9", "retention.ms": "5"})))
    policy.validate(req(TopicAction.MODIFY, pre=state(configs={"segment.ms": "9"}), post=state(configs={})))
    refused(policy, req(TopicAction.MODIFY, pre=state(configs={}), post=state(configs={"segment.ms": "9"})),
            "Rule fauxka.policy.allowed.configs: topic 't' may not set segment.ms "
            "(allowed: retention.ms, cleanup.policy).")


def test_rules_config_ranges_and_values():
    policy = rules(**{"config_retention_ms_min": "1000", "config_retention_ms_max": "86400000",
                      "config_min_cleanable_dirty_ratio_max": "0.9", "config_cleanup_policy_allowed": "delete,compact"})
    policy.validate(req(post=state(configs={"retention.ms": "1000", "cleanup.policy": "compact"})))
    policy.validate(req(post=state(configs={})))  # ranges apply to configs that are set
    refused(policy, req(post=state(configs={"retention.ms": "999"})),
            "Rule fauxka.policy.config.retention.ms.min: topic 't' would have retention.ms=999, less than 1000.")
    refused(policy, req(post=state(configs={"retention.ms": "86400001"})),
            "Rule fauxka.policy.config.retention.ms.max: "
            "topic 't' would have retention.ms=86400001, more than 86400000.")
    refused(policy, req(post=state(configs={"retention.ms": "soon"})),
            "Rule fauxka.policy.config.retention.ms.min: topic 't' would have retention.ms=soon, not a number.")
    refused(policy, req(post=state(configs={"min.cleanable.dirty.ratio": "0.95"})),
            "Rule fauxka.policy.config.min.cleanable.dirty.ratio.max: "
            "topic 't' would have min.cleanable.dirty.ratio=0.95, more than 0.9.")
    refused(policy, req(post=state(configs={"cleanup.policy": "compact,delete"})),
            "Rule fauxka.policy.config.cleanup.policy.allowed: "
            "topic 't' would have cleanup.policy=compact,delete, not one of delete, compact.")
    # MODIFY checks the changed configs in post_state only
    policy.validate(req(TopicAction.MODIFY, pre=state(configs={"retention.ms": "5"}),
                        post=state(configs={"retention.ms": "5", "cleanup.policy": "delete"})))
    refused(policy, req(TopicAction.MODIFY, pre=state(configs={"retention.ms": "5000"}),
                        post=state(configs={"retention.ms": "5"}), requested_configs={"retention.ms": "5"}),
            "Rule fauxka.policy.config.retention.ms.min: topic 't' would have retention.ms=5, less than 1000.")


def test_rules_partition_increase_and_delete_lists():
    policy = rules(no_partition_increase_topics="orders, audit-.*", no_delete_topics="__.*,keep", max_partitions="2")
    refused(policy, req(TopicAction.MODIFY, topic="audit-eu", pre=state(3), post=state(4)),
            "Rule fauxka.policy.no.partition.increase.topics: topic 'audit-eu' may not gain partitions (3 to 4).")
    refused(policy, req(TopicAction.MODIFY, topic="orders", pre=state(1), post=state(2)),
            "Rule fauxka.policy.no.partition.increase.topics: topic 'orders' may not gain partitions (1 to 2).")
    policy.validate(req(TopicAction.MODIFY, topic="audit-eu", pre=state(3), post=state(3, configs={"a": "b"})))
    policy.validate(req(TopicAction.MODIFY, topic="ordersx", pre=state(1), post=state(2)))
    policy.validate(req(topic="orders", post=state(2)))  # creating is not an increase
    refused(policy, req(TopicAction.DELETE, topic="__consumer_offsets", pre=state(50)),
            "Rule fauxka.policy.no.delete.topics: topic '__consumer_offsets' may not be deleted.")
    refused(policy, req(TopicAction.DELETE, topic="keep", pre=state()),
            "Rule fauxka.policy.no.delete.topics: topic 'keep' may not be deleted.")
    policy.validate(req(TopicAction.DELETE, topic="other", pre=state(50)))  # DELETE ignores max.partitions


def test_rules_exempt_principals():
    policy = rules(max_partitions="1", no_delete_topics=".*", exempt_principals="User:admin, User:ops")
    policy.validate(req(principal="User:admin", post=state(100)))
    policy.validate(req(TopicAction.DELETE, principal="User:ops", pre=state()))
    refused(policy, req(TopicAction.DELETE, principal="User:opsx", pre=state()),
            "Rule fauxka.policy.no.delete.topics: topic 't' may not be deleted.")


def test_rules_without_rules_admit_everything_and_ignore_other_keys():
    policy = rules(record_file="/tmp/x")
    policy.validate(req(post=state(1000, 9, {"anything": "x"})))
    assert policy.ignored_keys == ["fauxka.policy.record.file"]


@pytest.mark.parametrize("key,value,words", [
    ("max.partitions", "ten", "Invalid value ten for configuration fauxka.policy.max.partitions: not an integer"),
    ("min.replication.factor", "0", "fauxka.policy.min.replication.factor: must be at least 1"),
    ("topic.name.pattern", "[a-", "Invalid value [a- for configuration fauxka.policy.topic.name.pattern: bad regex"),
    ("no.delete.topics", "ok,(", "configuration fauxka.policy.no.delete.topics: bad regex"),
    ("config.retention.ms.min", "1h", "configuration fauxka.policy.config.retention.ms.min: not a number"),
    ("config.retention.ms.minimum", "1", "Unknown rule fauxka.policy.config.retention.ms.minimum"),
])
def test_rules_bad_configuration(key, value, words):
    with pytest.raises(PolicyConfigError) as e:
        RulesPolicy().configure({"fauxka.policy." + key: value})
    assert words in str(e.value)


def test_rules_min_above_max():
    with pytest.raises(PolicyConfigError, match="min.replication.factor \\(3\\) is above"):
        rules(min_replication_factor="3", max_replication_factor="2")
    with pytest.raises(PolicyConfigError, match="config.retention.ms.min \\(10\\) is above"):
        rules(**{"config_retention_ms_min": "10", "config_retention_ms_max": "5"})


def test_rules_bad_configuration_at_load_names_key():
    with pytest.raises(PolicyConfigError, match="fauxka.policy.max.partitions"):
        load_policies({ACTIONS_KEY: "fauxka.controller.rules_policy:RulesPolicy", "fauxka.policy.max.partitions": "x"})
