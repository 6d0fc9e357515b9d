"""Forwarding with SASL and ACLs: the controller authorizes, polices and audits the original
client, and only the brokers' own principal may send envelopes."""

import asyncio
import re
import urllib.request

import pytest
from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient, NewTopic,
                                   ResourcePatternType, ResourceType)

from fauxka.broker.auth.client import authenticate
from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import encode_request, request_schema
from fauxka.broker.protocol.principal import serialize_principal
from tests.admin_helpers import topic_spec, unique
from tests.harness import Cluster

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
OVERRIDES = {
    "sasl.enabled.mechanisms": "PLAIN",
    "sasl.mechanism.inter.broker.protocol": "PLAIN",
    "inter.broker.listener.name": "CLIENT",  # brokers forward over SASL, as User:broker
    "listener.name.client.plain.sasl.jaas.config": f'{PLAIN} required username="broker" password="b" '
                                                   'user_broker="b" user_alice="a" user_bob="c";',
    "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
    "super.users": "User:broker",
    "topic.actions.policy.class.name": "tests.unit.policy_fixtures:OnlyAlice",
    "advertised.controller": "self",
}
PASSWORDS = {"broker": "b", "alice": "a", "bob": "c"}


@pytest.fixture(scope="module")
def secure(zookeeper, tmp_path_factory):
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("secure"), 3, OVERRIDES, {"CLIENT": "SASL_PLAINTEXT"})
    cluster.start()
    admin = as_user(cluster, "broker", cluster.controller_id())
    bindings = [
        AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL, "User:alice", "*",
                   AclOperation.ALL, AclPermissionType.ALLOW),
        AclBinding(ResourceType.TOPIC, "*", ResourcePatternType.LITERAL, "User:alice", "*",
                   AclOperation.ALL, AclPermissionType.ALLOW),
        AclBinding(ResourceType.TOPIC, "bob-", ResourcePatternType.PREFIXED, "User:bob", "*",
                   AclOperation.CREATE, AclPermissionType.ALLOW),
    ]
    for future in admin.create_acls(bindings).values():
        future.result()
    yield cluster
    cluster.stop()


def as_user(cluster, user: str, broker_id: int) -> AdminClient:
    return AdminClient({"bootstrap.servers": cluster.listener_address(broker_id, "CLIENT"),
                        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                        "sasl.username": user, "sasl.password": PASSWORDS[user]})


def raw(cluster, broker_id: int, user: str, api_key: int, version: int, values: dict):
    async def go():
        host, _, port = cluster.listener_address(broker_id, "CLIENT").rpartition(":")
        conn = await KafkaConnection.open(host, int(port), 5)
        try:
            await authenticate(conn, "PLAIN", user, PASSWORDS[user], 5)
            return await conn.send(build(request_schema(api_key, version), values), 15)
        finally:
            await conn.close()
    return asyncio.run(go())


def create(cluster, broker_id: int, user: str, name: str):
    response = raw(cluster, broker_id, user, 19, 7, {"topics": [topic_spec(name, 1, 1)], "timeout": 10000,
                                                     "validate_only": False})
    [topic] = response.topics
    return int(topic.error_code), topic.error_message


def forwarded(cluster, broker_id: int) -> float:
    url = f"http://127.0.0.1:{cluster.brokers[broker_id].metrics_port}/metrics"
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    return sum(float(v) for v in re.findall(r'^fauxka_forwarding_requests_total\{api="[a-z_]+"\} (\S+)$', text, re.M))


def non_controller(cluster) -> int:
    return next(b for b in cluster.brokers if b != cluster.controller_id())


def test_alices_forwarded_write_is_authorized_policed_and_audited_as_alice(secure):
    other = non_controller(secure)
    before = forwarded(secure, other)
    name = unique("alice")
    assert create(secure, other, "alice", name) == (0, None)
    assert forwarded(secure, other) - before == 1
    [event] = [e for e in secure.audit_events() if e["resource_name"] == name]
    assert (event["principal"], event["client_address"], event["forwarded_by"]) == ("User:alice", "127.0.0.1", other)
    assert event["receiving_broker"] == secure.controller_id()


def test_bob_is_refused_by_acls_and_then_by_the_policy(secure):
    other = non_controller(secure)
    plain_name, bobs_name = unique("plain"), unique("bob-")
    assert create(secure, other, "bob", plain_name) == (29, "Authorization failed.")
    code, message = create(secure, other, "bob", bobs_name)  # his ACL admits it; the policy does not
    assert (code, message) == (44, "only User:alice may CREATE topics, not User:bob")
    for name in (plain_name, bobs_name):
        assert secure.zk_get(f"/brokers/topics/{name}") is None


def test_only_the_brokers_principal_may_send_envelopes(secure):
    name = unique("smuggled")
    inner = encode_request(build(request_schema(19, 7), {"topics": [topic_spec(name, 1, 1)], "timeout": 5000,
                                                         "validate_only": False}), 1, "x")[4:]
    envelope = {"request_data": inner, "request_principal": serialize_principal("User:alice"),
                "client_host_address": bytes([127, 0, 0, 1])}
    response = raw(secure, secure.controller_id(), "bob", 58, 0, envelope)  # bob has no ClusterAction
    assert (int(response.error_code), response.response_data) == (31, None)
    assert secure.zk_get(f"/brokers/topics/{name}") is None


def test_real_clients_through_non_controllers_match_the_counters(secure):
    before = {b: forwarded(secure, b) for b in secure.brokers}
    other = non_controller(secure)
    admin = as_user(secure, "alice", other)
    name = unique("rc")
    admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=10)[name].result()
    binding = AclBinding(ResourceType.TOPIC, name, ResourcePatternType.LITERAL, "User:bob", "*",
                         AclOperation.READ, AclPermissionType.ALLOW)
    for future in admin.create_acls([binding]).values():
        future.result()
    admin.delete_topics([name], operation_timeout=10)[name].result()
    events = [e for e in secure.audit_events() if e["resource_name"] == name or name in e["resource_name"]]
    assert {e["action"] for e in events} >= {"CREATE", "DELETE"}
    assert all(e["principal"] == "User:alice" and e["error_code"] == 0 for e in events)
    by_broker = {b: 0 for b in secure.brokers}
    for e in events:
        if e["forwarded_by"] is not None:
            by_broker[e["forwarded_by"]] += 1
    assert {b: forwarded(secure, b) - before[b] for b in secure.brokers} == by_broker


def test_the_controllers_requests_are_cluster_actions_a_client_may_not_send(secure):
    """LeaderAndIsr, StopReplica, UpdateMetadata from bob (no ClusterAction): refused at the top
    (and for every partition named) with CLUSTER_AUTHORIZATION_FAILED, as Kafka's authorizeClusterOperation
    answers; the brokers' own (User:broker) go through, so Metadata still names a leader."""
    name = unique("cluster-action")
    assert create(secure, secure.controller_id(), "alice", name) == (0, None)
    target = non_controller(secure)
    common = {"controller_id": secure.controller_id(), "controller_epoch": 1 << 20, "broker_epoch": -1}
    state = {"partition_index": 0, "controller_epoch": 1 << 20, "leader": target, "leader_epoch": 99, "isr": [target],
             "zk_version": 99, "partition_epoch": 99, "replicas": [target]}
    answers = {
        6: raw(secure, target, "bob", 6, 8, {**common, "live_brokers": [], "topic_states": [
            {"topic_name": name, "partition_states": [state]}]}),
        4: raw(secure, target, "bob", 4, 7, {**common, "type": 0, "live_leaders": [], "topic_states": [
            {"topic_name": name, "partition_states": [state]}]}),
        5: raw(secure, target, "bob", 5, 4, {**common, "topic_states": [{"topic_name": name, "partition_states": [
            {"partition_index": 0, "leader_epoch": -2, "delete_partition": True}]}]}),
    }
    assert {key: int(response.error_code) for key, response in answers.items()} == {6: 31, 4: 31, 5: 31}
    assert [int(p.error_code) for p in answers[5].partition_errors] == [31]
    assert [int(p.error_code) for t in answers[4].topics for p in t.partition_errors] == [31]
    # nothing applied: the epoch bob sent would otherwise have been taken as the newest
    response = raw(secure, target, "broker", 6, 8, {**common, "controller_epoch": 1, "live_brokers": [],
                                                     "topic_states": []})
    assert int(response.error_code) == 0
