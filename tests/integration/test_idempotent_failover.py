"""An idempotent producer's batch that a follower replicated but whose acks=all answer never came
(the leader was killed while the high watermark waited for a stalled follower) is resent by the
client to the new leader, which must answer it as a duplicate at its original offset: exactly one
copy in the log (Kafka builds the follower's producer state from the batches it replicates).
Its own cluster: it kills a broker."""

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.admin_helpers import create_topics, topic_spec, unique
from tests.fault_kit_helpers import log_size

pytestmark = pytest.mark.disruptive

# the stalled follower must stay in the ISR (holding the high watermark back) until the kill
SLOW_ISR = {"replica.lag.time.max.ms": "120000"}


def _read(bootstrap: str, topic: str) -> list[tuple[int, bytes]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("g"), "enable.auto.commit": False,
                         "isolation.level": "read_uncommitted"})
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
        consumer.assign([TopicPartition(topic, 0, 0)])
        out = []
        while len(out) < high:
            msg = consumer.poll(30)
            assert msg is not None, f"read {len(out)} of {high} records"
            if msg.error() is None:
                out.append((msg.offset(), msg.value()))
        return out
    finally:
        consumer.close()


@pytest.mark.timeout(300)
def test_a_batch_resent_to_the_new_leader_after_a_kill_is_written_once(fauxka_cluster_factory):
    from kafka.admin import KafkaAdminClient

    cluster = fauxka_cluster_factory(3, overrides=SLOW_ISR)
    topic = cluster.unique_topic("idem-failover")
    # replicas in election order: 1 leads, 2 (which will have the batch) is elected next, 3 stalls
    [result] = create_topics(cluster.bootstrap.split(",")[0], [topic_spec(
        topic, assignments={0: [1, 2, 3]}, configs={"min.insync.replicas": "2"})])
    assert int(result.error_code) == 0, result
    cluster.wait_for(lambda: cluster.leader(topic, 0) == 1 and len(cluster.isr(topic, 0)) == 3, 30,
                     what="the topic fully replicated, led by broker 1")
    acked: dict[bytes, list] = {}
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True, "acks": "all",
                         "linger.ms": 0, "delivery.timeout.ms": 120000, "log_level": 0})

    def report(err, msg):
        acked.setdefault(msg.value(), []).append(msg.offset() if err is None else str(err))

    producer.produce(topic, b"before", partition=0, on_delivery=report)
    assert producer.flush(60) == 0 and acked[b"before"] == [0]
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    try:
        size = log_size(admin, 2, topic)
        stalled = cluster.add_fault("replication", broker=3, delay_ms=-1)
        producer.produce(topic, b"once", partition=0, on_delivery=report)
        producer.poll(0)
        cluster.wait_for(lambda: log_size(admin, 2, topic) > size, 30, what="broker 2 replicated the batch")
    finally:
        admin.close()
    assert b"once" not in acked  # the high watermark waits for broker 3
    cluster.kill(1)
    cluster.remove_fault(stalled.id)
    cluster.wait_for(lambda: cluster.leader(topic, 0) == 2, 60, what="broker 2 elected")
    assert producer.flush(90) == 0
    assert acked[b"once"] == [1]
    assert _read(cluster.bootstrap, topic) == [(0, b"before"), (1, b"once")]
