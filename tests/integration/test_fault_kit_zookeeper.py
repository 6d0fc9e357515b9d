"""The fault kit's ZooKeeper faults: ZooKeeper stopped and started again (Cluster.stop_zookeeper /
start_zookeeper, `fauxka terminate|restart zookeeper`), and one broker's link to ZooKeeper cut
(a `zookeeper` fault) until its session expires."""

import pytest

from tests.fault_kit_helpers import _produce, _topic


def _create(cluster, name: str, timeout_s: float = 10):
    """CreateTopics through confluent-kafka's admin client: None, or the error it ended with."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    future = admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=timeout_s,
                                 request_timeout=timeout_s)[name]
    try:
        future.result(timeout_s + 10)
        return None
    except KafkaException as exc:
        return exc.args[0]


@pytest.mark.disruptive
def test_zookeeper_stopped_keeps_the_data_plane_and_holds_metadata_until_it_is_back(fauxka_cluster_factory):
    cluster = fauxka_cluster_factory(brokers=3, own_zookeeper=True)
    topic = _topic(cluster, 1, 3)
    assert _produce(cluster, topic, 0) == [None]

    cluster.stop_zookeeper()
    assert _produce(cluster, topic, 0) == [None]  # acks=all with the whole ISR: no ZooKeeper needed
    error = _create(cluster, cluster.unique_topic(), timeout_s=3)
    assert error is not None, "a topic was created without ZooKeeper"

    cluster.start_zookeeper()
    created = cluster.unique_topic()
    cluster.wait_for(lambda: _create(cluster, created) is None, 30, what="CreateTopics served again")
    cluster.wait_for(lambda: cluster.leader(created, 0) > 0, 10, what="the new topic's leader")
    assert sorted(cluster.registered()) == [1, 2, 3]  # the sessions survived the short stop
    assert _produce(cluster, created, 0) == [None]
