"""Every broker serves Kafka's metrics under the names the JMX exporter with Strimzi's rules gives
them: each name on docs/kafka-metrics.md's list is scraped from a live cluster, and no kafka_* name
is served that the list does not hold."""

from confluent_kafka import Consumer, Producer

from fauxka.testing.cluster import wait_for
from tests.admin_helpers import create_topics, topic_spec, unique
from tests.metrics_helpers import kafka_metric_list, sample_names, scrape


def _traffic(cluster) -> None:
    """Records on a replicated topic (follower fetches), a consumer group that commits, a topic created
    through a broker that forwards it."""
    topic = unique()
    other = next(b for b in cluster.brokers if b != cluster.controller_id())
    create_topics(cluster.address_of(other), [topic_spec(topic, 3, 3)])
    producer = Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(30):
        producer.produce(topic, key=str(i).encode(), value=b"v")
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"),
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got = 0

    def consumed() -> bool:
        nonlocal got
        message = consumer.poll(0.5)
        got += message is not None and not message.error()
        return got >= 30

    try:
        wait_for(consumed, 30, interval_s=0, what="30 records consumed")
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()


def _served(cluster) -> set[str]:
    names: set[str] = set()
    for broker in cluster.brokers.values():
        names |= sample_names(scrape(broker.metrics_port))
    return names


def test_every_listed_kafka_metric_is_served_and_only_those(cluster):
    listed = kafka_metric_list()
    assert len(listed) > 60
    _traffic(cluster)
    missing: set[str] = set()

    def all_served() -> bool:
        missing.clear()
        missing.update(set(listed) - _served(cluster))
        return not missing

    wait_for(all_served, 15, interval_s=0.5, what="every listed name served")
    unlisted = {name for name in _served(cluster) if name.startswith("kafka_")} - set(listed)
    assert not unlisted, f"served but not on docs/kafka-metrics.md: {sorted(unlisted)}"
