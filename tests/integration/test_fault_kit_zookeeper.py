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
    # the sessions survive the short stop, unless a broker's reconnect met ZooKeeper's start (see
    # Cluster.stop_zookeeper): that one registers again
    cluster.wait_for(lambda: sorted(cluster.registered()) == [1, 2, 3], 20, what="every broker registered")
    assert _produce(cluster, created, 0) == [None]


def _metadata_brokers(cluster, broker_id: int) -> list[int]:
    import asyncio

    from fauxka import probe

    host, port = cluster.address(broker_id).rsplit(":", 1)
    return asyncio.run(probe.metadata(host, int(port), 5.0)).brokers


@pytest.mark.disruptive
def test_a_cut_zookeeper_link_expires_the_broker_until_the_fault_is_removed(fauxka_cluster_factory):
    from confluent_kafka import Producer

    cluster = fauxka_cluster_factory(brokers=3, overrides={"zookeeper.session.timeout.ms": "2000"})
    controller = cluster.wait_for(lambda: max(cluster.controller(), 0), 10, what="a controller")
    victim, other = [b for b in cluster.broker_ids if b != controller]
    topic = _topic(cluster, assignment=[[victim, other]])
    assert cluster.leader(topic, 0) == victim

    with cluster.fault("zookeeper", broker=victim):
        cluster.wait_for(lambda: victim not in cluster.registered(), 15, what="the cut broker's session expired")
        cluster.wait_for(lambda: cluster.leader(topic, 0) == other, 15, what="the leadership moved off it")
        cluster.wait_for(lambda: _metadata_brokers(cluster, controller) == sorted([controller, other]), 10,
                         what="Metadata without the cut broker")
        # a client of the others follows the new leader (the cut broker itself still believes it leads:
        # its view of the cluster stopped with its link, as a Kafka broker's does)
        healthy = Producer({"bootstrap.servers": f"{cluster.address(controller)},{cluster.address(other)}",
                            "acks": "all"})
        assert _produce(cluster, topic, 0, producer=healthy) == [None]
        assert victim not in cluster.registered()  # it stays out while the link is cut
    cluster.wait_for(lambda: victim in cluster.registered(), 15, what="the broker registered again")
    cluster.wait_for(lambda: sorted(cluster.isr(topic, 0)) == sorted([victim, other]), 20,
                     what="the broker back in the ISR")
    for broker_id in cluster.broker_ids:
        cluster.wait_for(lambda: _metadata_brokers(cluster, broker_id) == [1, 2, 3], 10,
                         what=f"broker {broker_id}'s Metadata with all three")
    assert _produce(cluster, topic, 0) == [None]
