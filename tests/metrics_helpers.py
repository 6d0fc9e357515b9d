"""Scraping brokers' /metrics and the list of Kafka metric names fauxka serves (docs/kafka-metrics.md)."""

import pathlib
import re
import urllib.request

from confluent_kafka import Consumer, Producer
from prometheus_client.parser import text_string_to_metric_families

from fauxka.testing.cluster import wait_for
from tests.admin_helpers import create_topics, topic_spec, unique

LIST = pathlib.Path(__file__).resolve().parents[1] / "docs" / "kafka-metrics.md"


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def sample_names(text: str) -> set[str]:
    """The names of the samples a scrape holds (a counter's end in _total)."""
    return {sample.name for family in text_string_to_metric_families(text) for sample in family.samples}


def summed(cluster, name: str) -> float:
    """A sample name's values added up over every label set and broker."""
    return sum(s.value for b in cluster.brokers.values()
               for f in text_string_to_metric_families(scrape(b.metrics_port)) for s in f.samples if s.name == name)


def kafka_metric_list() -> dict[str, str]:
    """Prometheus name -> Kafka MBean, from the table of docs/kafka-metrics.md."""
    rows = re.findall(r"^\| `(kafka_\w+)` \| (.+?) \|", LIST.read_text(), re.M)
    return dict(rows)


def traffic(cluster) -> None:
    """Records on a replicated topic (follower fetches), a consumer group that commits, topics created
    through a broker that forwards them, a keyless record refused by a compacted topic (Kafka counts
    it in FailedProduceRequestsPerSec), a record over its topic's max.message.bytes (BytesRejectedPerSec)."""
    topic, compacted, small = unique(), unique("compacted"), unique("small")
    other = next(b for b in cluster.brokers if b != cluster.controller_id())
    create_topics(cluster.address_of(other), [topic_spec(topic, 3, 3),
                                              topic_spec(compacted, 1, 1, configs={"cleanup.policy": "compact"}),
                                              topic_spec(small, 1, 1, configs={"max.message.bytes": "1000"})])
    producer = Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(30):
        producer.produce(topic, key=str(i).encode(), value=b"v")
    refused = []
    producer.produce(compacted, value=b"no key", on_delivery=lambda err, _: refused.append(err))
    assert producer.flush(10) == 0
    producer.produce(small, value=b"x" * 5000, on_delivery=lambda err, _: refused.append(err))
    assert producer.flush(10) == 0
    assert [e.name() for e in refused] == ["INVALID_RECORD", "MSG_SIZE_TOO_LARGE"], refused
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
