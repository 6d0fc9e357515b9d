"""Every supported version of ApiVersions, Metadata and DescribeCluster, over TCP."""

import asyncio

import pytest

from fauxka.broker.protocol import api_table
from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import request_once
from fauxka.broker.protocol.codec import request_schema


def ask(cluster, broker_id, key, version, values):
    request = build(request_schema(key, version), values)
    return asyncio.run(request_once(*cluster.brokers[broker_id].address, request, 5.0))


@pytest.mark.parametrize("version", range(0, 5))
def test_api_versions_lists_the_api_table(cluster, version):
    response = ask(cluster, 1, 18, version, {"client_software_name": "fauxka-tests",
                                             "client_software_version": "1"})
    assert int(response.error_code) == 0
    advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert advertised == {a.key: a.advertised_range for a in api_table.TABLE.values()}


@pytest.mark.parametrize("version", range(0, 13))
def test_metadata_answers_every_version(cluster, version):
    topics = [] if version == 0 else None  # v0: empty list means all topics
    response = ask(cluster, 2, 3, version, {"topics": topics, "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False,
                                            "include_cluster_authorized_operations": False})
    assert sorted(b.node_id for b in response.brokers) == [1, 2, 3]
    if version >= 1:
        assert response.controller_id in (1, 2, 3)
    if version >= 2:
        assert response.cluster_id == cluster.metadata(1).cluster_id


def test_metadata_for_an_unknown_topic_is_unknown_topic_or_partition(cluster):
    # the client declines auto-creation (on in the cluster, as Kafka's default): test_auto_create.py
    response = ask(cluster, 1, 3, 9, {"topics": [{"name": "no-such-topic"}], "allow_auto_topic_creation": False,
                                      "include_topic_authorized_operations": False,
                                      "include_cluster_authorized_operations": False})
    assert [(t.name, int(t.error_code)) for t in response.topics] == [("no-such-topic", 3)]


def test_metadata_with_an_empty_topic_list_returns_no_topics(cluster):
    response = ask(cluster, 1, 3, 4, {"topics": [], "allow_auto_topic_creation": False})
    assert response.topics == ()
    assert len(response.brokers) == 3


@pytest.mark.parametrize("version", [0, 1])
def test_describe_cluster(cluster, version):
    response = ask(cluster, 3, 60, version, {"include_cluster_authorized_operations": False, "endpoint_type": 1})
    assert int(response.error_code) == 0
    assert sorted(b.broker_id for b in response.brokers) == [1, 2, 3]
    assert response.controller_id in (1, 2, 3)
    assert response.cluster_id == cluster.metadata(3).cluster_id


def test_describe_cluster_for_controller_endpoints_is_refused(cluster):
    response = ask(cluster, 3, 60, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 2})
    assert int(response.error_code) == 114  # MISMATCHED_ENDPOINT_TYPE
    assert response.brokers == ()


def test_metadata_for_an_illegal_topic_name_is_invalid_topic_exception(cluster):
    response = ask(cluster, 1, 3, 9, {"topics": [{"name": "bad name!"}], "allow_auto_topic_creation": False,
                                      "include_topic_authorized_operations": False,
                                      "include_cluster_authorized_operations": False})
    assert [(t.name, int(t.error_code)) for t in response.topics] == [("bad name!", 17)]


def test_kafka_python_takes_fauxka_for_kafka_3_9(cluster):
    """kafka-python infers the broker's version from its ApiVersions (Fetch v17 is 3.9's mark)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap)
    try:
        assert consumer.config["api_version"] == (3, 9)
    finally:
        consumer.close()
