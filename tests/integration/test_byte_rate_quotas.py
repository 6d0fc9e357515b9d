"""producer_byte_rate and consumer_byte_rate enforced on the shared cluster with confluent-kafka (librdkafka
honours throttle_time_ms, KIP-219): each test sets a quota for its own client id, moves ~4 MB and checks
that the rate stays near the quota, that the client was told to back off (throttle_cb) and that the
leader's throttle-time metric counted it.

The rate window is Kafka's default, 11 samples of 1 s: the first burst of ~10 s worth of quota passes
before any throttling (Rate counts at least num - 1 windows), so the time taken is at least
(total - 10 * quota) / quota."""

import asyncio
import time
import urllib.request

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.codec import decode_response, encode_request, request_schema
from fauxka.broker.protocol.framing import read_frame
from tests.admin_helpers import create_topics, topic_spec, unique
from tests.data_helpers import batch, leader_of
from tests.integration.test_client_quotas import alter
from tests.integration.test_quota_enforcement import METADATA

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
    print(f"produced {total} B in {elapsed:.1f} s with a {QUOTA} B/s quota")
    assert elapsed >= 0.7 * (total - 10 * QUOTA) / QUOTA, elapsed  # unthrottled this takes well under 1 s
    assert elapsed <= 3 * (total - 10 * QUOTA) / QUOTA, elapsed  # near the quota, not far below it
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
    print(f"consumed {total} B in {elapsed:.1f} s with a {QUOTA} B/s quota")
    assert received == COUNT
    assert 0.7 * (total - 10 * QUOTA) / QUOTA <= elapsed <= 3 * (total - 10 * QUOTA) / QUOTA, elapsed
    assert throttles and max(throttles) > 0
    assert _throttle_metric(cluster, leader_of(cluster, topic), "consumer_byte_rate", client_id) > 0


def test_acks_zero_produce_is_throttled_by_muting(cluster):
    """No response carries the throttle time: the connection reads nothing more for it
    (sendNoOpResponseExemptThrottle after requestHelper.throttle)."""
    topic, client_id = _topic(cluster), unique("acks0-quota")
    assert alter(cluster.controller_address(), [([("client-id", client_id)], [("producer_byte_rate", 10_000)])])[0][1] == 0
    time.sleep(1)
    # 150 KB over the 10 s window: 1.5x the 10 KB/s quota, throttled ~5 s
    produce = build(request_schema(0, 9), {
        "transactional_id": None, "acks": 0, "timeout": 10000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch([b"y" * 1000] * 150)}]}]})
    metadata = build(request_schema(3, 9), METADATA)
    host, _, port = cluster.address_of(leader_of(cluster, topic)).rpartition(":")

    async def run():
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 10)
        try:
            writer.write(encode_request(produce, 1, client_id) + encode_request(metadata, 2, client_id))
            await writer.drain()
            started = time.monotonic()
            frame = await asyncio.wait_for(read_frame(reader, 1 << 20), 30)
            return time.monotonic() - started, decode_response(frame, type(metadata))[0]
        finally:
            writer.close()

    waited, correlation_id = asyncio.run(run())
    assert correlation_id == 2  # the produce had no response
    assert 3.0 <= waited <= 15, waited  # the metadata request was read only after the ~5 s mute
