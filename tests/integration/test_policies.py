"""Policies loaded by the controller: KIP-108 legacy, KIP-201 topic actions, the rules policy.

Each test starts a private one-broker cluster, since policies are start-up configuration.
"""

import subprocess
import sys

from tests.admin_helpers import create_topics, delete_topics, errors, topic_spec, unique
from tests.harness import BrokerProcess
from tests.unit.policy_fixtures import read_records

FIXTURES = "tests.unit.policy_fixtures"


def test_a_legacy_create_policy_refuses_with_its_message_also_for_validate_only(make_cluster):
    cluster = make_cluster(1, {"create.topic.policy.class.name": f"{FIXTURES}:RejectAllCreates"})
    address = cluster.controller_address()
    name = unique()
    for validate_only in (True, False):
        assert errors(create_topics(address, [topic_spec(name, 1, 1)], validate_only=validate_only)) == [
            (name, 44, "no topics today")]
    assert cluster.zk_get(f"/brokers/topics/{name}") is None
    # the policy runs after Kafka's own checks: a bad request is refused for its own reason first
    assert errors(create_topics(address, [topic_spec(name, 0, 1)]))[0][1] == 37


def test_a_crashing_policy_gives_unknown_server_error_and_a_logged_traceback(make_cluster):
    cluster = make_cluster(1, {"topic.actions.policy.class.name": f"{FIXTURES}:CrashingPolicy"})
    name = unique()
    assert errors(create_topics(cluster.controller_address(), [topic_spec(name, 1, 1)])) == [(name, -1, None)]
    log = cluster.brokers[1].log_file.read_text()
    assert "policy failed" in log and "RuntimeError" in log


def test_topic_actions_policy_sees_create_and_delete_with_states_and_principal(make_cluster, tmp_path):
    record = tmp_path / "actions.jsonl"
    cluster = make_cluster(1, {"topic.actions.policy.class.name": f"{FIXTURES}:RecordingTopicActions",
                               "fauxka.policy.record.file": str(record)})
    address = cluster.controller_address()
    name = unique()
    create_topics(address, [topic_spec(name, 2, 1, configs={"retention.ms": "60000"})])
    delete_topics(address, names=[name])
    create, delete = read_records(record)
    assert (create["action"], create["topic"], create["principal"]) == ("CREATE", name, "User:ANONYMOUS")
    assert create["pre_state"] is None
    assert create["post_state"]["num_partitions"] == 2 and create["post_state"]["replication_factor"] == 1
    assert create["post_state"]["configs"] == {"retention.ms": "60000"}
    assert create["post_state"]["replica_assignments"] == {"0": [1], "1": [1]}
    assert (delete["action"], delete["post_state"]) == ("DELETE", None)
    assert delete["pre_state"]["num_partitions"] == 2 and delete["pre_state"]["configs"] == {"retention.ms": "60000"}


def test_topic_actions_policy_by_principal(make_cluster):
    cluster = make_cluster(1, {"topic.actions.policy.class.name": f"{FIXTURES}:OnlyAlice"})
    name = unique()
    [(_, code, message)] = errors(create_topics(cluster.controller_address(), [topic_spec(name, 1, 1)]))
    assert (code, message) == (44, "only User:alice may CREATE topics, not User:ANONYMOUS")


def test_rules_policy_messages_name_the_rule(make_cluster):
    cluster = make_cluster(1, {"topic.actions.policy.class.name": "fauxka.controller.rules_policy:RulesPolicy",
                               "fauxka.policy.max.partitions": "2",
                               "fauxka.policy.topic.name.pattern": "team-[a-z]+-.*"})
    address = cluster.controller_address()
    too_many, badly_named, fine = unique("team-a"), unique("other"), unique("team-a")
    results = errors(create_topics(address, [topic_spec(too_many, 3, 1), topic_spec(badly_named, 1, 1),
                                             topic_spec(fine, 2, 1)]))
    assert results[0][1] == 44 and "fauxka.policy.max.partitions" in results[0][2]
    assert results[1][1] == 44 and "fauxka.policy.topic.name.pattern" in results[1][2]
    assert results[2] == (fine, 0, None)


def test_topic_actions_policy_with_a_legacy_key_is_a_start_up_error(zookeeper, tmp_path):
    broker = BrokerProcess(1, zookeeper.connect + "/policy-conflict", tmp_path, {
        "topic.actions.policy.class.name": f"{FIXTURES}:OnlyAlice",
        "create.topic.policy.class.name": f"{FIXTURES}:RejectAllCreates"})
    result = subprocess.run([sys.executable, "-m", "fauxka", "broker", "--config", str(broker.config)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "topic.actions.policy.class.name" in result.stderr and "create.topic.policy.class.name" in result.stderr
