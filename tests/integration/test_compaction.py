"""A compacted topic read from the beginning after the cleaner ran, through librdkafka: a fetch
at an offset compaction removed answers the next batch at or after it (Kafka reads from the first
batch whose last offset >= the fetch offset), so the consumer reaches end-of-partition with the
surviving records."""

import time

import pytest

from tests.admin_helpers import create_topics, errors, topic_spec, unique
from tests.harness import wait_for

COMPACT = {"cleanup.policy": "compact", "segment.ms": "500", "min.cleanable.dirty.ratio": "0.01"}
KEYS = [f"k{i}" for i in range(5)]
ROUNDS = 4


def _read_to_eof(bootstrap: str, topic: str, within_s: float) -> tuple[list[tuple[int, str, str]], bool]:
    """(offset, key, value) from the beginning of partition 0, and whether end-of-partition came."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("g"), "enable.auto.commit": False,
                  "enable.partition.eof": True})
    try:
        c.assign([TopicPartition(topic, 0, 0)])  # OFFSET_BEGINNING is -2; 0 is the log start here
        got, deadline = [], time.monotonic() + within_s
        while time.monotonic() < deadline:
            m = c.poll(1)
            if m is None:
                continue
            if m.error() is not None:
                if m.error().code() == KafkaError._PARTITION_EOF:
                    return got, True
                raise AssertionError(m.error())
            got.append((m.offset(), m.key().decode(), m.value().decode()))
        return got, False
    finally:
        c.close()


@pytest.mark.timeout(240)
@pytest.mark.parametrize("idempotent", [False, True])
def test_consumer_reaches_eof_on_a_compacted_topic_with_the_surviving_keys(cluster, idempotent):
    """With idempotent producers, the first producer's batches are all superseded by the second's:
    its last batch stays, empty, for its producer state (Kafka's BatchRetention.RETAIN_EMPTY)."""
    from confluent_kafka import Producer

    topic = unique("compact")
    assert [e[1] for e in errors(create_topics(cluster.controller_address(),
                                               [topic_spec(topic, 1, 3, configs=COMPACT)]))] == [0]
    conf = {"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0, "enable.idempotence": idempotent}
    producer = Producer(conf)
    for r in range(ROUNDS):  # one batch a record; segment.ms passes between rounds: several segments
        if r == ROUNDS - 1:
            producer = Producer(conf)  # another producer id for the last round
        for k in KEYS:
            producer.produce(topic, f"{k}-{r}".encode(), k.encode(), partition=0)
            producer.flush(30)
        time.sleep(0.6)
    producer.produce(topic, b"last", b"tail", partition=0)  # rolls the last round's segment
    assert producer.flush(30) == 0
    total = ROUNDS * len(KEYS) + 1

    # The cleaner runs every log.cleaner.backoff.ms (15 s): wait until records are gone.
    wait_for(lambda: len(_read_to_eof(cluster.bootstrap, topic, 20)[0]) < total, 120, 1.0,
             "the cleaner removed records")
    got, eof = _read_to_eof(cluster.bootstrap, topic, 30)
    assert eof, f"no end-of-partition after {got}"
    latest = {k: v for _, k, v in got}
    assert latest == {**{k: f"{k}-{ROUNDS - 1}" for k in KEYS}, "tail": "last"}
    assert got[-1][0] == total - 1 and len(got) < total
    assert [o for o, _, _ in got] == sorted({o for o, _, _ in got})  # offsets kept, increasing


def _produce_compactable(bootstrap: str, topic: str, count: int, size: int) -> None:
    """librdkafka 0077's filler: `count` records of one key, one a batch, the last a tombstone."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "batch.num.messages": 1})
    key = unique("fill").encode()
    for _ in range(count - 1):
        producer.produce(topic, b"x" * size, key, partition=0)
    producer.produce(topic, None, key, partition=0)
    assert producer.flush(30) == 0


@pytest.mark.timeout(300)
def test_librdkafka_0077_shape_reaches_eof_with_the_latest_of_each_key(cluster):
    """librdkafka's 0077-compaction: size-rolled segments, fillers with tombstones, keyed records
    with tombstones and unique keys, then a consumer group reading to end-of-partition."""
    from confluent_kafka import Consumer, KafkaError, Producer

    topic = unique("c0077")
    configs = {"cleanup.policy": "compact", "segment.ms": "10000", "segment.bytes": "10000",
               "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "86400",
               "file.delete.delay.ms": "10000", "max.compaction.lag.ms": "100"}
    spec = topic_spec(topic, 1, 1, configs=configs)  # replication factor 1, as 0077 creates it
    assert [e[1] for e in errors(create_topics(cluster.controller_address(), [spec]))] == [0]
    _produce_compactable(cluster.bootstrap, topic, 20, 1000)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "message.max.bytes": 6000, "linger.ms": 10})
    keys, count, expected = ["k1", "k2", "k3", None], 40, {}
    for cnt in range(count):
        k = cnt % 4
        is_last = cnt + 4 - k >= count
        tombstone = k == 0 and (is_last or not (cnt - k) % 7)
        key = keys[k] or str(cnt)
        value = None if tombstone else f"msg-{cnt}".encode()
        producer.produce(topic, value, key.encode(), partition=0)
        if keys[k] is None or is_last:
            expected[key] = value
    assert producer.flush(30) == 0
    _produce_compactable(cluster.bootstrap, topic, 20, 1024)
    time.sleep(20)  # the cleaner runs every 15 s

    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"), "auto.offset.reset": "earliest",
                  "enable.partition.eof": True})
    got, eof = {}, False
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not eof:
            m = c.poll(1)
            if m is None:
                continue
            if m.error() is not None:
                assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                eof = True
                continue
            if not m.key().decode().startswith("fill"):
                got[m.key().decode()] = m.value()
    finally:
        c.close()
    assert eof
    assert {k: v for k, v in got.items() if k in expected} == expected
