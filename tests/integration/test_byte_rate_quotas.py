"""producer_byte_rate and consumer_byte_rate enforced on the shared cluster with confluent-kafka (librdkafka
honours throttle_time_ms, KIP-219): each test sets a quota for its own client id, moves ~4 MB and checks
that the rate stays near the quota, that the client was told to back off (throttle_cb) and that the
leader's throttle-time metric counted it.

The rate window is Kafka's default, 11 samples of 1 s: the first burst of ~10 s worth of quota passes
before any throttling (Rate counts at least num - 1 windows), so the time taken is at least
(total - 10 * quota) / quota."""

import time
import urllib.request

from tests.admin_helpers import create_topics, topic_spec, unique
from tests.data_helpers import leader_of
from tests.integration.test_client_quotas import alter

QUOTA = 200_000  # bytes per second
VALUE = b"x" * 1000
COUNT = 4000  # ~4 MB: ~2 MB over the first burst, ~10 s at the quota


def _topic(cluster) -> str:
    name = unique("bytes")
    [result] = create_topics(cluster.controller_address(), [topic_spec(name, 1, 1)])
    assert int(result.error_code) == 0
    return name


def _set_quota(cluster, client_id: str, quota_type: str) -> None:
    assert alter(cluster.controller_address(), [([("client-id", client_id)], [(quota_type, QUOTA)])])[0][1] == 0
    time.sleep(1)  # the brokers' ZooKeeper watches


def _throttle_metric(cluster, broker_id: int, quota_type: str, client_id: str) -> float:
    port = cluster.brokers[broker_id].metrics_port
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    prefix = f'fauxka_quota_throttle_seconds_total{{client_id="{client_id}",quota="{quota_type}",user=""}} '
    return sum(float(line[len(prefix):]) for line in text.splitlines() if line.startswith(prefix))


def _produce(cluster, topic: str, client_id: str, throttles: list) -> float:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "client.id": client_id, "acks": "all",
                         "linger.ms": 5, "throttle_cb": lambda event: throttles.append(event.throttle_time)})
    started = time.monotonic()
    for _ in range(COUNT):
        while True:
            try:
                producer.produce(topic, VALUE)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    assert producer.flush(60) == 0
    return time.monotonic() - started


def test_producer_byte_rate_throttles_near_the_quota(cluster):
    topic, client_id = _topic(cluster), unique("prod-quota")
    _set_quota(cluster, client_id, "producer_byte_rate")
    throttles: list[float] = []
    elapsed = _produce(cluster, topic, client_id, throttles)
    total = COUNT * len(VALUE)
    assert elapsed >= 0.7 * (total - 10 * QUOTA) / QUOTA, elapsed  # unthrottled this takes ~1 s
    assert elapsed < 60
    assert throttles and max(throttles) > 0
    assert _throttle_metric(cluster, leader_of(cluster, topic), "producer_byte_rate", client_id) > 0


def test_consumer_byte_rate_throttles_near_the_quota(cluster):
    from confluent_kafka import Consumer

    topic, client_id = _topic(cluster), unique("cons-quota")
    _produce(cluster, topic, unique("filler"), [])  # no quota on the producer
    _set_quota(cluster, client_id, "consumer_byte_rate")
    throttles: list[float] = []
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "client.id": client_id, "group.id": unique("g"),
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "throttle_cb": lambda event: throttles.append(event.throttle_time)})
    try:
        consumer.subscribe([topic])
        received, started, first = 0, time.monotonic(), None
        deadline = started + 90
        while received < COUNT and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                first = first or time.monotonic()
                received += 1
        elapsed = time.monotonic() - first
    finally:
        consumer.close()
    total = COUNT * len(VALUE)
    assert received == COUNT
    assert elapsed >= 0.7 * (total - 10 * QUOTA) / QUOTA, elapsed
    assert throttles and max(throttles) > 0
    assert _throttle_metric(cluster, leader_of(cluster, topic), "consumer_byte_rate", client_id) > 0
