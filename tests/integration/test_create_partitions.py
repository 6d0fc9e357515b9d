"""CreatePartitions against the shared cluster: real clients, Kafka's codes and messages."""

import asyncio
import time

import pytest
import structlog
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import request_once
from fauxka.broker.protocol.codec import request_schema
from tests.admin_helpers import create_topics, errors, send, topic_spec, unique
from tests.harness import wait_for
from tests.unit.policy_fixtures import read_records
from fauxka.zkstore import ZkStore

UNKNOWN_TOPIC_OR_PARTITION, REQUEST_TIMED_OUT, INVALID_PARTITIONS = 3, 7, 37
INVALID_REPLICA_ASSIGNMENT, INVALID_REQUEST = 39, 42


@pytest.fixture(scope="module")
def admin(cluster):
    return AdminClient({"bootstrap.servers": cluster.bootstrap})


def make_topic(admin, partitions: int = 1, replication_factor: int = 2) -> str:
    name = unique("cp")
    admin.create_topics([NewTopic(name, partitions, replication_factor)])[name].result(30)
    return name


def increase(admin, *specs: NewPartitions, **kwargs) -> dict[str, tuple[int, str] | None]:
    """Topic -> None, or (error code, message) of the failure."""
    out = {}
    for topic, future in admin.create_partitions(list(specs), request_timeout=30, **kwargs).items():
        try:
            future.result(30)
            out[topic] = None
        except KafkaException as exc:
            out[topic] = (exc.args[0].code(), exc.args[0].str())
    return out


def partitions_on(cluster, broker_id: int, topic: str) -> dict[int, tuple[int, list[int]]]:
    """partition -> (leader, replicas) in the Metadata answer of one broker."""
    response = send(cluster.address_of(broker_id), 3, 12, {
        "topics": [{"name": topic, "topic_id": None}], "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False})
    [t] = response.topics
    return {p.partition_index: (p.leader_id, list(p.replica_nodes)) for p in t.partitions}


def wait_partitions(cluster, topic: str, count: int, timeout_s: float = 10.0) -> dict[int, dict]:
    """Every broker's view once each shows `count` partitions, all with leaders."""
    deadline = time.monotonic() + timeout_s
    while True:
        views = {b: partitions_on(cluster, b, topic) for b in cluster.brokers}
        if all(len(v) == count and all(leader >= 0 for leader, _ in v.values()) for v in views.values()):
            return views
        assert time.monotonic() < deadline, views
        time.sleep(0.05)


def test_increase_gives_every_broker_leaders_for_the_new_partitions(cluster, admin):
    topic = make_topic(admin, 2, 2)
    before = wait_partitions(cluster, topic, 2)[1]
    assert increase(admin, NewPartitions(topic, 5), operation_timeout=10) == {topic: None}
    views = wait_partitions(cluster, topic, 5)
    assert all(v == views[1] for v in views.values())
    assert {p: views[1][p] for p in (0, 1)} == before  # the old partitions are untouched
    for leader, replicas in views[1].values():
        assert len(replicas) == 2 and len(set(replicas)) == 2 and leader == replicas[0]
    # Kafka continues from partition 0's first replica over the brokers sorted by id (1, 2, 3)
    first = views[1][0][0]
    assert [views[1][p][0] for p in (2, 3, 4)] == [(first - 1 + p) % 3 + 1 for p in (2, 3, 4)]
    assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 5


def test_manual_assignment_is_used_as_given(cluster, admin):
    topic = make_topic(admin, 1, 2)
    assert increase(admin, NewPartitions(topic, 3, replica_assignment=[[3, 1], [2, 3]])) == {topic: None}
    view = wait_partitions(cluster, topic, 3)[2]
    assert view[1] == (3, [3, 1]) and view[2] == (2, [2, 3])


def test_validate_only_changes_nothing(cluster, admin):
    topic = make_topic(admin, 1, 1)
    wait_partitions(cluster, topic, 1)  # every broker knows the topic (brokers learn it through watches)
    assert increase(admin, NewPartitions(topic, 4), validate_only=True) == {topic: None}
    assert cluster.zk_get(f"/brokers/topics/{topic}/partitions/1") is None  # written before any answer
    assert len(partitions_on(cluster, 1, topic)) == 1
    # validate_only still checks
    assert increase(admin, NewPartitions(topic, 1), validate_only=True) == {
        topic: (INVALID_PARTITIONS, "Topic already has 1 partitions.")}


def test_counts_and_unknown_topics(cluster, admin):
    topic, missing = make_topic(admin, 3, 1), unique("missing")
    assert increase(admin, NewPartitions(topic, 2)) == {
        topic: (INVALID_PARTITIONS, "Topic currently has 3 partitions, which is higher than the requested 2.")}
    assert increase(admin, NewPartitions(topic, 3)) == {topic: (INVALID_PARTITIONS, "Topic already has 3 partitions.")}
    assert increase(admin, NewPartitions(missing, 2)) == {
        missing: (UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{missing}' does not exist.")}
    # an empty assignment list (not null) is a manual assignment of nothing
    assert _raw(cluster.controller_address(), [_t(topic, 4, [])]) == [
        (topic, INVALID_REPLICA_ASSIGNMENT, "Increasing the number of partitions by 1 but 0 assignments provided.")]


@pytest.mark.parametrize("total, assignment, message", [
    (2, [[1, 9]], "Unknown broker(s) in replica assignment: 9."),
    (3, [[1, 2]], "Increasing the number of partitions by 2 but 1 assignments provided."),
    (2, [[2, 2]], "Duplicate brokers not allowed in replica assignment: 2, 2 for partition id 1."),
    (3, [[1, 2], [3]], "Inconsistent replication factor between partitions, partition 0 has 2 while "
                       "partitions [2] have replication factors [1], respectively."),
])
def test_bad_manual_assignments(admin, total, assignment, message):
    topic = make_topic(admin, 1, 2)
    assert increase(admin, NewPartitions(topic, total, replica_assignment=assignment)) == {
        topic: (INVALID_REPLICA_ASSIGNMENT, message)}


def test_timeout_zero_answers_request_timed_out_but_the_partitions_exist(cluster, admin):
    topic, other = make_topic(admin, 1, 1), make_topic(admin, 1, 1)
    assert _raw(cluster.controller_address(), [_t(topic, 3)], timeout_ms=0) == [(topic, REQUEST_TIMED_OUT, None)]
    wait_partitions(cluster, topic, 3)
    # librdkafka hides REQUEST_TIMED_OUT when operation_timeout <= 0 (the creation is under way)
    assert increase(admin, NewPartitions(other, 2), operation_timeout=0) == {other: None}
    wait_partitions(cluster, other, 2)


def test_kafka_python_increases_and_reports_errors(cluster, admin):
    from kafka.admin import KafkaAdminClient

    topic, missing = make_topic(admin, 1, 2), unique("missing")
    client = KafkaAdminClient(bootstrap_servers=cluster.controller_address(), request_timeout_ms=30000)
    try:
        response = client.create_partitions({topic: {"count": 2, "assignments": [[2, 3]]}, missing: 4},
                                            timeout_ms=10000, raise_errors=False)
        got = {r.name: (r.error_code, r.error_message) for r in response.results}
        assert got == {topic: (0, None),
                       missing: (UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{missing}' does not exist.")}
        response = client.create_partitions({topic: 3}, validate_only=True, raise_errors=False)
        assert [(r.name, r.error_code) for r in response.results] == [(topic, 0)]
    finally:
        client.close()
    assert wait_partitions(cluster, topic, 2)[1][1] == (2, [2, 3])


def _t(name: str, count: int, assignments: list[list[int]] | None = None) -> dict:
    return {"name": name, "count": count,
            "assignments": None if assignments is None else [{"broker_ids": b} for b in assignments]}


def _raw(address: str, topics: list[dict], version: int = 3, validate_only: bool = False, timeout_ms: int = 10000):
    response = send(address, 37, version, {"topics": topics, "timeout": timeout_ms, "validate_only": validate_only})
    return errors(response.results)


def test_a_non_controller_forwards_and_answers_as_the_controller(cluster):
    a, b = unique("a"), unique("b")
    topics = [_t(n, 2) for n in (a, b, a)]
    for version in range(4):
        forwarded = _raw(cluster.non_controller_address(), topics, version)
        assert forwarded == _raw(cluster.controller_address(), topics, version)
        assert forwarded == [(b, UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{b}' does not exist."),
                             (a, INVALID_REQUEST, "Duplicate topic in request.")]


def test_duplicates_and_response_order(cluster, admin):
    topic, dup, missing = make_topic(admin, 1, 1), unique("dup"), unique("missing")
    got = _raw(cluster.controller_address(), [_t(dup, 2), _t(missing, 2), _t(topic, 2), _t(dup, 3)], version=0)
    # Kafka's Map: the validated topics in request order, then the duplicates, once each
    assert got == [(missing, UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{missing}' does not exist."),
                   (topic, 0, None), (dup, INVALID_REQUEST, "Duplicate topic in request.")]


def test_one_audit_event_per_topic(cluster, admin):
    topic, missing = make_topic(admin, 1, 1), unique("missing")
    increase(admin, NewPartitions(topic, 2), NewPartitions(missing, 2))
    events = {e["resource_name"]: e for e in cluster.audit_events()
              if e["action"] == "CREATE_PARTITIONS" and e["resource_name"] in (topic, missing)}
    assert set(events) == {topic, missing}
    assert all(e["resource_type"] == "TOPIC" and e["api"] == "create_partitions" for e in events.values())
    assert (events[topic]["error_code"], events[missing]["error_code"]) == (0, UNKNOWN_TOPIC_OR_PARTITION)
    assert events[topic]["validate_only"] is False and list(events[topic]["new_partitions"]) == ["1"]


def test_topic_actions_policy_sees_a_modify_after_kafkas_own_checks(make_cluster, tmp_path):
    record = tmp_path / "actions.jsonl"
    private = make_cluster(1, {"topic.actions.policy.class.name": "tests.unit.policy_fixtures:RecordingTopicActions",
                               "fauxka.policy.record.file": str(record)})
    address = private.controller_address()
    topic = unique("cp")
    create_topics(address, [topic_spec(topic, 1, 1)])
    assert _raw(address, [_t(topic, 3)], validate_only=True) == [(topic, 0, None)]
    assert _raw(address, [_t(topic, 1)])[0][1] == INVALID_PARTITIONS
    assert _raw(address, [_t(topic, 2, [[1]])]) == [(topic, 0, None)]
    _, checked, manual = read_records(record)  # the refused decrease never reached the policy
    assert (checked["action"], checked["validate_only"], checked["manual_assignment"]) == ("MODIFY", True, False)
    assert checked["pre_state"]["replica_assignments"] == {"0": [1]}
    assert checked["post_state"]["replica_assignments"] == {"0": [1], "1": [1], "2": [1]}
    assert (manual["validate_only"], manual["manual_assignment"]) == (False, True)
    assert manual["post_state"]["num_partitions"] == 2


def test_rules_policy_refuses_an_increase_with_policy_violation(make_cluster):
    private = make_cluster(1, {"topic.actions.policy.class.name": "fauxka.controller.rules_policy:RulesPolicy",
                               "fauxka.policy.max.partitions": "2"})
    address = private.controller_address()
    topic = unique("cp")
    create_topics(address, [topic_spec(topic, 1, 1)])
    refused = (topic, 44, f"Rule fauxka.policy.max.partitions: topic '{topic}' would have 3 partitions, more than 2.")
    for validate_only in (True, False):
        assert _raw(address, [_t(topic, 3)], validate_only=validate_only) == [refused]
    assert private.zk_get(f"/brokers/topics/{topic}/partitions/1") is None
    assert _raw(address, [_t(topic, 2)]) == [(topic, 0, None)]


def test_concurrent_increases_of_one_topic_are_applied_one_after_the_other(cluster, admin):
    topic = make_topic(admin, 1, 1)
    host, _, port = cluster.controller_address().rpartition(":")

    async def both():
        requests = [build(request_schema(37, 3), {"topics": [_t(topic, n)],
                                                  "timeout": 0, "validate_only": False}) for n in (3, 5)]
        return await asyncio.gather(*(request_once(host, int(port), r, 30) for r in requests))

    to_three, to_five = (errors(r.results)[0] for r in asyncio.run(both()))
    assert to_five == (topic, REQUEST_TIMED_OUT, None)  # written (timeout 0), whoever went first
    assert to_three in ((topic, REQUEST_TIMED_OUT, None), (
        topic, INVALID_PARTITIONS, "Topic currently has 5 partitions, which is higher than the requested 3."))
    assert sorted(wait_partitions(cluster, topic, 5)[1]) == [0, 1, 2, 3, 4]


def test_a_marker_written_by_another_completes_and_the_topic_is_then_unknown(make_cluster):
    """A deletion marker nobody's DeleteTopics wrote (Kafka's AdminZkClient.deleteTopic) is carried
    out by the active controller, as Kafka's TopicDeletionManager does; CreatePartitions then finds
    no topic, duplicates refused as before. The queued-first order of the answer (INVALID_TOPIC
    "The topic is queued for deletion.") is the pure triage's, tested in test_partitions_rules.py:
    a queued topic's window here lasts only until the controller's multi-op."""
    private = make_cluster(1)
    address = private.controller_address()
    queued, dup, missing = unique("queued"), unique("dup"), unique("missing")
    create_topics(address, [topic_spec(queued, 1, 1)])

    async def mark():
        store = ZkStore(private.zk_connect, 10000, structlog.get_logger())
        await store.start(10)
        await store.create(f"/admin/delete_topics/{queued}")
        await store.stop()

    asyncio.run(mark())
    wait_for(lambda: private.zk_get(f"/brokers/topics/{queued}") is None
             and private.zk_get(f"/admin/delete_topics/{queued}") is None, 15, 0.1, "the marker carried out")
    got = _raw(address, [_t(queued, 1), _t(dup, 2), _t(missing, 2), _t(dup, 2)])
    assert sorted(got) == sorted([(missing, UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{missing}' does not exist."),
                                  (queued, UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{queued}' does not exist."),
                                  (dup, INVALID_REQUEST, "Duplicate topic in request.")])
