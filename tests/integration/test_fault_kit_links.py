"""The fault kit's replica faults: replication stopped, a link cut, a log failed (fauxka.testing, the plugin)."""

import time

import pytest

from tests.fault_kit_helpers import LAGGY, _topic, log_size


@pytest.mark.disruptive
def test_a_cut_link_drops_the_follower_from_the_isr_until_restored(fauxka_cluster_factory):
    from confluent_kafka import Producer

    cluster = fauxka_cluster_factory(brokers=3, overrides=LAGGY)
    controller = cluster.wait_for(lambda: max(cluster.controller(), 0), 10, what="a controller")
    leader, follower = [b for b in cluster.broker_ids if b != controller]  # the link to the controller stays up
    topic = _topic(cluster, assignment=[[leader, follower]])
    assert cluster.leader(topic, 0) == leader
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "1"})
    with cluster.fault("link", broker=leader, peer=follower):
        def shrunk():
            producer.produce(topic, b"x", partition=0)
            producer.flush(5)
            return cluster.isr(topic, 0) == [leader]
        cluster.wait_for(shrunk, 20, what="the follower out of the ISR")
    cluster.wait_for(lambda: sorted(cluster.isr(topic, 0)) == sorted([leader, follower]), 20,
                     what="the follower back in the ISR")


def _offline_replicas(cluster, broker_id: int, topic: str) -> list[int]:
    """Metadata v12's offline_replicas of the topic's partition 0, as broker_id answers it."""
    from tests.admin_helpers import send

    response = send(cluster.address(broker_id), 3, 12, {
        "topics": [{"topic_id": None, "name": topic}], "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False})
    [partition] = response.topics[0].partitions
    return list(partition.offline_replicas)


@pytest.mark.disruptive
def test_a_failed_log_takes_the_replica_offline_until_restored(fauxka_cluster_factory):
    from confluent_kafka import KafkaError, Producer

    from tests.data_helpers import batch, produce

    cluster = fauxka_cluster_factory(brokers=3, overrides=LAGGY)
    topic = _topic(cluster, 1, 3)
    failed = cluster.leader(topic, 0)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "retry.backoff.ms": 100})
    assert all(_offline_replicas(cluster, b, topic) == [] for b in cluster.broker_ids)
    with cluster.fault("storage", broker=failed, topic=topic):
        # Kafka's controller on a log dir failure: the replica goes offline, out of leadership and ISR
        cluster.wait_for(lambda: cluster.leader(topic, 0) not in (-1, failed), 10, what="the leadership moved")
        cluster.wait_for(lambda: failed not in cluster.isr(topic, 0), 10, what="the failed replica out of the ISR")
        for broker_id in cluster.broker_ids:  # every broker's Metadata says so
            assert _offline_replicas(cluster, broker_id, topic) == [failed]
        producer.produce(topic, b"x", partition=0)
        assert producer.flush(10) == 0  # acks=all from the other two
        assert failed not in cluster.isr(topic, 0)  # and it stays out: its follower fetches nothing
        part, _ = produce(cluster.address(failed), topic, 0, batch([b"y"]))  # straight to the failed broker
        assert part.error_code == KafkaError.KAFKA_STORAGE_ERROR
    cluster.wait_for(lambda: failed in cluster.isr(topic, 0), 20, what="the replica back in the ISR")
    assert all(_offline_replicas(cluster, b, topic) == [] for b in cluster.broker_ids)


@pytest.mark.disruptive
def test_stopped_replication_shrinks_the_isr_until_removed(fauxka_cluster_factory):
    from confluent_kafka import Producer

    cluster = fauxka_cluster_factory(brokers=2, overrides=LAGGY)
    topic = _topic(cluster, 1, 2)
    leader = cluster.leader(topic, 0)
    follower = 3 - leader
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "1"})
    with cluster.fault("replication", broker=follower, topic=topic, delay_ms=-1):
        for _ in range(5):
            producer.produce(topic, b"x", partition=0)
            producer.flush(10)
            time.sleep(0.3)
        cluster.wait_for(lambda: cluster.isr(topic, 0) == [leader], 20, what="the follower out of the ISR")
    cluster.wait_for(lambda: sorted(cluster.isr(topic, 0)) == [1, 2], 20, what="the follower back in the ISR")


@pytest.mark.disruptive
@pytest.mark.parametrize("on_topic", [False, True], ids=["broker", "topic"])
def test_no_record_produced_once_replication_is_stopped_reaches_the_follower(fauxka_cluster_factory, on_topic):
    """A caught-up follower's fetch waits at its leader for records (replica.fetch.wait.max.ms, 500
    ms): one sent before the fault is added and answered after must not carry the record produced
    once add_fault returned. Each round the follower has caught up, so its fetch is waiting. A fault
    on the topic alone hits the follower's incremental fetches that do not name it too (its fetch
    session at the leader holds it)."""
    from confluent_kafka import Producer
    from kafka.admin import KafkaAdminClient

    cluster = fauxka_cluster_factory(brokers=2)
    topic = _topic(cluster, 1, 2)
    leader = cluster.leader(topic, 0)
    follower = 3 - leader
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "1", "linger.ms": 0})
    try:
        for n in range(8):
            cluster.wait_for(lambda: log_size(admin, follower, topic) == log_size(admin, leader, topic), 20,
                             what="the follower caught up")
            before = log_size(admin, follower, topic)
            time.sleep(0.6)  # the fetch waiting now has no news to carry: an incremental one names nothing
            with cluster.fault("replication", broker=follower, delay_ms=-1, **({"topic": topic} if on_topic else {})):
                producer.produce(topic, f"after the fault {n}".encode(), partition=0)
                assert producer.flush(10) == 0
                time.sleep(0.7)  # longer than a fetch waits at the leader
                assert log_size(admin, follower, topic) == before, f"round {n}: the record reached the follower"
    finally:
        admin.close()
