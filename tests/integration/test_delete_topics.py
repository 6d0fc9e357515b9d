"""DeleteTopics: marking, the controller completing the deletion, waiting, errors."""

from confluent_kafka.admin import AdminClient, NewTopic

import uuid

from tests.admin_helpers import create_topics, delete_topics, errors, send, topic_spec, unique


def test_delete_waits_until_the_topic_is_gone_everywhere(cluster):
    controller = cluster.controller_address()
    name = unique()
    create_topics(controller, [topic_spec(name, 3, 2, configs={"retention.ms": "1000"})])
    admin = AdminClient({"bootstrap.servers": controller})
    admin.delete_topics([name], operation_timeout=10)[name].result()
    assert name not in admin.list_topics(timeout=10).topics
    for path in (f"/brokers/topics/{name}", f"/config/topics/{name}", f"/admin/delete_topics/{name}"):
        assert cluster.zk_get(path) is None, path


def test_unknown_names_and_ids(cluster):
    controller = cluster.controller_address()
    missing_id = uuid.uuid4()
    results = delete_topics(controller, names=["no-such-topic"], ids=[missing_id])
    assert [(r.name, int(r.error_code)) for r in results] == [("no-such-topic", 3), (None, 100)]
    assert results[1].topic_id == missing_id


def test_delete_by_topic_id(cluster):
    controller = cluster.controller_address()
    name = unique()
    [created] = create_topics(controller, [topic_spec(name, 1, 1)])
    [result] = delete_topics(controller, ids=[created.topic_id])
    assert (result.name, int(result.error_code), result.topic_id) == (name, 0, created.topic_id)
    assert cluster.zk_get(f"/brokers/topics/{name}") is None


def test_name_and_id_together_is_an_invalid_request(cluster):
    response = send(cluster.controller_address(), 20, 6,
                    {"topics": [{"name": "x", "topic_id": uuid.uuid4()}], "timeout": 1000})
    [result] = response.responses
    assert (int(result.error_code), result.error_message) == (42, "Topic name and topic ID can not both be specified.")


def test_zero_timeout_answers_request_timed_out_and_still_deletes(cluster):
    controller = cluster.controller_address()
    name = unique()
    create_topics(controller, [topic_spec(name, 1, 1)])
    [result] = delete_topics(controller, names=[name], timeout_ms=0)
    assert int(result.error_code) == 7
    assert cluster.zk_get(f"/brokers/topics/{name}") is None


def test_old_versions_by_name(cluster):
    controller = cluster.controller_address()
    name = unique()
    create_topics(controller, [topic_spec(name, 1, 1)])
    results = delete_topics(controller, names=[name], version=1)
    assert [(r.name, int(r.error_code)) for r in results] == [(name, 0)]


def test_a_non_controller_forwards_the_delete(cluster):
    results = delete_topics(cluster.non_controller_address(), names=["whatever"])
    assert [int(r.error_code) for r in results] == [3]


def test_deletion_disabled(make_cluster):
    small = make_cluster(1, {"delete.topic.enable": "false"})
    address = small.controller_address()
    name = unique()
    admin = AdminClient({"bootstrap.servers": address})  # keep it alive until the future resolves
    admin.create_topics([NewTopic(name, 1, 1)])[name].result()
    assert [int(r.error_code) for r in delete_topics(address, names=[name])] == [73]
    assert [int(r.error_code) for r in delete_topics(address, names=[name], version=2)] == [42]
    assert small.zk_get(f"/brokers/topics/{name}") is not None
    assert errors(create_topics(address, [topic_spec(name, 1, 1)]))[0][1] == 36
