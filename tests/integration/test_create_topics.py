"""CreateTopics against the controller of the shared cluster: Kafka's rules, codes and messages."""

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.admin_helpers import create_topics, errors, topic_spec, unique


@pytest.fixture(scope="module")
def controller(cluster):
    return cluster.controller_address()


def test_a_mixed_batch_creates_the_valid_topics_and_explains_the_rest(cluster, controller):
    good, existing, bad_name = unique("good"), unique("exists"), "bad!name"
    create_topics(controller, [topic_spec(existing, 1, 1)])
    results = create_topics(controller, [
        topic_spec(good, 3, 2),
        topic_spec(existing, 1, 1),
        topic_spec(unique(), 0, 1),
        topic_spec(unique(), 1, 0),
        topic_spec(unique(), 1, 4),
        topic_spec(bad_name, 1, 1),
        topic_spec(unique(), 1, 1, configs={"no.such.config": "1"}),
        topic_spec(unique(), 1, 1, configs={"retention.ms": "soon"}),
        topic_spec(unique(), 1, 1, configs={"retention.ms": None}),
        topic_spec(unique(), 1, -1, assignments={0: [1]}),
    ])
    got = [(code, message) for _, code, message in errors(results)]
    assert got == [
        (0, None),
        (36, f"Topic '{existing}' already exists."),
        (37, "Number of partitions must be larger than 0."),
        (38, "Replication factor must be larger than 0."),
        (38, "Replication factor: 4 larger than available brokers: 3."),
        (17, "Topic name is invalid: 'bad!name' contains one or more characters other than "
             "ASCII alphanumerics, '.', '_' and '-'"),
        (40, "Unknown topic config name: no.such.config"),
        (40, "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        (40, "Null value not supported for topic configs: retention.ms"),
        (42, "Both numPartitions or replicationFactor and replicasAssignments were set. "
             "Both cannot be used at the same time."),
    ]
    assert [r.name for r in results][0] == good
    md = AdminClient({"bootstrap.servers": cluster.bootstrap}).list_topics(timeout=10)
    assert good in md.topics and bad_name not in md.topics
    assert len(md.topics[good].partitions) == 3
    assert all(len(p.replicas) == 2 and p.leader in p.replicas for p in md.topics[good].partitions.values())


def test_duplicates_in_one_request_fail_every_occurrence(controller):
    name, other = unique(), unique()
    results = create_topics(controller, [topic_spec(name, 1, 1), topic_spec(other, 1, 1), topic_spec(name, 2, 1)])
    assert errors(results) == [(name, 42, "Found multiple entries for this topic."), (other, 0, None),
                               (name, 42, "Found multiple entries for this topic.")]


def test_manual_assignments(controller):
    ok, uneven, dup, gap = unique(), unique(), unique(), unique()
    results = create_topics(controller, [
        topic_spec(ok, assignments={0: [1, 2], 1: [2, 3]}),
        topic_spec(uneven, assignments={0: [1, 2], 1: [3]}),
        topic_spec(dup, assignments={0: [1, 1]}),
        topic_spec(gap, assignments={0: [1], 2: [2]}),
    ])
    got = errors(results)
    assert got[0] == (ok, 0, None)
    assert got[1] == (uneven, 39, "All partitions should have the same number of replicas")
    assert got[2][1] == 39 and got[2][2].startswith("Duplicate replica assignment found: ")
    assert got[3] == (gap, 39, "partitions should be a consecutive 0-based integer sequence")


def test_names_that_collide_on_dot_and_underscore(controller):
    base = unique("col")
    assert errors(create_topics(controller, [topic_spec(f"{base}.x", 1, 1)]))[0][1] == 0
    result = errors(create_topics(controller, [topic_spec(f"{base}_x", 1, 1)]))[0]
    assert result == (f"{base}_x", 17, f"Topic '{base}_x' collides with existing topics: {base}.x")


def test_defaults_apply_for_minus_one_and_v5_reports_counts_configs_and_id(cluster, controller):
    name = unique()
    [result] = create_topics(controller, [topic_spec(name, configs={"cleanup.policy": "compact"})])
    assert int(result.error_code) == 0
    assert (result.num_partitions, result.replication_factor) == (1, 1)  # num.partitions, default.replication.factor
    configs = {c.name: c for c in result.configs}
    assert (configs["cleanup.policy"].value, configs["cleanup.policy"].config_source) == ("compact", 1)
    assert (configs["retention.ms"].value, configs["retention.ms"].config_source) == ("604800000", 5)
    assert result.topic_id is not None and result.topic_id.int != 0
    assert b'"topic_id":"' in cluster.zk_get(f"/brokers/topics/{name}")


def test_validate_only_runs_every_check_and_writes_nothing(cluster, controller):
    name = unique()
    [ok, bad] = create_topics(controller, [topic_spec(name, 2, 2), topic_spec(unique(), 1, 9)], validate_only=True)
    assert (int(ok.error_code), ok.num_partitions, ok.replication_factor) == (0, 2, 2)
    assert int(bad.error_code) == 38
    assert cluster.zk_get(f"/brokers/topics/{name}") is None
    md = AdminClient({"bootstrap.servers": cluster.bootstrap}).list_topics(timeout=10)
    assert name not in md.topics


def test_zero_timeout_answers_request_timed_out_but_creates_the_topic(cluster, controller):
    name = unique()
    [result] = create_topics(controller, [topic_spec(name, 2, 1)], timeout_ms=0)
    assert (int(result.error_code), result.error_message) == (7, None)
    assert cluster.zk_get(f"/brokers/topics/{name}") is not None


def test_a_blocking_create_returns_when_the_controller_sees_every_leader(cluster, controller):
    admin = AdminClient({"bootstrap.servers": controller})
    name = unique()
    admin.create_topics([NewTopic(name, 6, 3)], operation_timeout=10)[name].result()
    view = AdminClient({"bootstrap.servers": controller}).list_topics(name, timeout=10)
    partitions = view.topics[name].partitions
    assert len(partitions) == 6 and all(p.leader in (1, 2, 3) for p in partitions.values())
    assert all(sorted(p.isrs) == sorted(p.replicas) for p in partitions.values())


def test_kafka_python_sees_the_same_errors(cluster):
    from kafka.admin import KafkaAdminClient
    from kafka.admin import NewTopic as KNewTopic
    from kafka.errors import TopicAlreadyExistsError

    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=15000)
    try:
        name = unique()
        admin.create_topics([KNewTopic(name, 2, 2)], timeout_ms=10000)
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([KNewTopic(name, 2, 2)], timeout_ms=10000)
        assert name in admin.list_topics()
    finally:
        admin.close()


def test_a_broker_that_is_not_the_controller_forwards_the_write(cluster):
    name = unique()
    [result] = create_topics(cluster.non_controller_address(), [topic_spec(name, 1, 1)])
    assert int(result.error_code) == 0
    assert cluster.zk_get(f"/brokers/topics/{name}") is not None
    [event] = [e for e in cluster.audit_events() if e["resource_name"] == name]
    assert event["forwarded_by"] is not None and event["forwarded_by"] != cluster.controller_id()
    assert event["receiving_broker"] == cluster.controller_id()


def test_every_topic_gets_an_audit_event_with_the_caller(cluster, controller):
    name = unique("audited")
    create_topics(controller, [topic_spec(name, 1, 1), topic_spec(name + "!", 1, 1)], validate_only=True)
    events = [e for e in cluster.audit_events() if e["resource_name"].startswith(name)]
    assert [(e["resource_name"], e["error_code"], e["validate_only"]) for e in events] == [
        (name, 0, True), (name + "!", 17, True)]
    event = events[0]
    assert event["principal"] == "User:ANONYMOUS" and event["client_address"] == "127.0.0.1"
    assert event["receiving_broker"] == cluster.controller_id() and event["forwarded_by"] is None
    assert event["api"] == "create_topics" and event["api_version"] == 7 and event["action"] == "CREATE"


def test_a_bulk_create_makes_every_replica_and_each_partition_takes_an_acks_all_produce(cluster, controller):
    """40 topics x 3 partitions x RF3 in one request: 120 new replicas on every broker, past the
    number made at once (replication/creation_pacer.py), so most are made by the background task
    after the answer; each partition still ends up led, with its followers in sync."""
    names = [unique("bulk") for _ in range(40)]
    results = create_topics(controller, [topic_spec(n, 3, 3) for n in names], timeout_ms=60000)
    assert errors(results) == [(n, 0, None) for n in names]
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "message.timeout.ms": 60000})
    failed = []
    for name in names:
        for partition in range(3):
            producer.produce(name, b"v", partition=partition, on_delivery=lambda err, msg: err and failed.append(err))
    assert producer.flush(90) == 0
    assert failed == []
