"""A pytest file you can copy: your application's Kafka code against a real fauxka cluster that
breaks on purpose. `pip install fauxka` brings the `fauxka_cluster` fixtures (a pytest11 plugin);
ZooKeeper (Debian's `zookeeper` package) must be installed. Run: pytest examples/test_my_app.py"""

import time

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(cluster, partitions=1, replication=3):
    topic = cluster.unique_topic("orders")
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, replication)])[topic].result(30)
    cluster.wait_for(lambda: len(cluster.isr(topic, 0)) == replication, 20, what="a full ISR")
    return topic


def send(producer, topic, value):
    errors = []
    producer.produce(topic, value, partition=0, on_delivery=lambda err, msg: errors.append(err))
    producer.flush(30)
    return errors


def test_producer_retries_through_a_leader_move(fauxka_cluster):
    topic = create_topic(fauxka_cluster)
    producer = Producer({"bootstrap.servers": fauxka_cluster.bootstrap, "acks": "all", "enable.idempotence": True})
    assert send(producer, topic, b"before") == [None]
    # the old leader answers NOT_LEADER_OR_FOLLOWER twice, then the leadership moves for real
    with fauxka_cluster.fault("error", api="produce", topic=topic, error="NOT_LEADER_OR_FOLLOWER", count=2):
        old = fauxka_cluster.leader(topic, 0)
        fauxka_cluster.move_leader(topic, 0, next(b for b in fauxka_cluster.broker_ids if b != old))
        assert send(producer, topic, b"during") == [None]
    assert send(producer, topic, b"after") == [None]


def test_consumer_survives_a_coordinator_failover(fauxka_cluster_factory):
    cluster = fauxka_cluster_factory(brokers=3, overrides={"offsets.topic.replication.factor": "3"})
    topic = create_topic(cluster)
    group = cluster.unique_topic("group")
    producer = Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(10):
        producer.produce(topic, b"%d" % i, partition=0)
    producer.flush(30)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    consumer.subscribe([topic])
    seen = set()

    def consume(count):  # until `count` distinct messages were seen, each committed
        deadline = time.monotonic() + 30
        while len(seen) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                seen.add(msg.value())
                try:
                    consumer.commit(msg, asynchronous=False)
                except KafkaException:
                    pass  # a commit during the failover (UNKNOWN_MEMBER_ID, ...): the message comes again
        return len(seen) >= count

    assert consume(1)  # the group has a coordinator now
    coordinator = cluster.wait_for(lambda: max(cluster.coordinator(group), 0), 10, what="a coordinator")
    cluster.kill(coordinator)  # the coordinator's broker dies; another replica of its partition takes over
    cluster.wait_for(lambda: cluster.coordinator(group) not in (-1, coordinator), 20, what="a new coordinator")
    assert consume(10)  # every message, through the new coordinator
    assert seen == {b"%d" % i for i in range(10)}
    consumer.close()
