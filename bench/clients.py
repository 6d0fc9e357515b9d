"""What one confluent-kafka (librdkafka) client gets from a broker: produce and consume rates,
produce latencies, the failover a producer sees, and the client's own ceiling with no real broker.

Every function checks what it measured (every record acknowledged without error, every record
consumed) and raises if not: a figure is never taken from a run that lost records."""

import contextlib
import gc
import logging
import statistics
import threading
import time
import uuid
from importlib.metadata import version
from typing import Callable

import confluent_kafka
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

QUEUE = {"queue.buffering.max.messages": 2_000_000, "queue.buffering.max.kbytes": 2_000_000}
_quiet = logging.getLogger("bench.rdkafka")  # librdkafka's log lines (a killed broker's disconnects) go nowhere
_quiet.addHandler(logging.NullHandler())
_quiet.propagate = False


def client_version() -> str:
    return f"{version('confluent-kafka')} (librdkafka {confluent_kafka.libversion()[0]})"


def _config(bootstrap: str, **extra) -> dict:
    return {"bootstrap.servers": bootstrap, "logger": _quiet, **extra}


@contextlib.contextmanager
def _no_gc():
    """Python's cyclic collector off while a rate is timed: a consumer allocates an object per
    record, and the collector's passes over them halved the rates measured (the client's cost,
    not the broker's). Reference counting still frees every record."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _consumer(bootstrap: str) -> Consumer:
    """An assign()-only consumer. fetch.queue.backoff.ms 10 instead of librdkafka's 1000: a
    partition whose local queue is full (queued.min.messages) otherwise stops fetching for a
    second, so a reader faster than that waited on the client, not the broker."""
    return Consumer(_config(bootstrap, **{"group.id": f"bench-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False,
                                          "fetch.queue.backoff.ms": 10}))


def create_topic(bootstrap: str, name: str, partitions: int, replicas: int, timeout_s: float = 30) -> None:
    """Create the topic and wait until Metadata names a leader for each of its partitions."""
    admin = AdminClient(_config(bootstrap))
    for future in admin.create_topics([NewTopic(name, partitions, replicas)], operation_timeout=timeout_s).values():
        future.result(timeout_s)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        topic = admin.list_topics(name, timeout=5).topics.get(name)
        if topic is not None and topic.error is None and len(topic.partitions) == partitions \
                and all(p.error is None and p.leader >= 0 for p in topic.partitions.values()):
            return
        time.sleep(0.05)
    raise TimeoutError(f"{name}: no leader for every partition within {timeout_s} s")


def delete_topic(bootstrap: str, name: str, timeout_s: float = 30) -> None:
    admin = AdminClient(_config(bootstrap))
    for future in admin.delete_topics([name], operation_timeout=timeout_s).values():
        future.result(timeout_s)


def _producer(bootstrap: str, errors: list, **extra) -> Producer:
    def delivered(err, _msg):
        if err is not None:
            errors.append(err)
    return Producer(_config(bootstrap, **QUEUE, **extra, on_delivery=delivered))


def produce_rate(bootstrap: str, topic: str, partitions: int, size: int, count: int, acks: str) -> float:
    """Records/s for `count` records of `size` bytes from one producer (librdkafka's defaults:
    linger.ms 5, batches up to 1 MB, no compression), from the first produce() until every
    record is acknowledged. One record per partition first, so connections are open."""
    errors: list = []
    producer = _producer(bootstrap, errors, acks=acks, **{"delivery.report.only.error": True})
    value = bytes(size)
    for partition in range(partitions):
        producer.produce(topic, value, partition=partition)
    if producer.flush(30) or errors:
        raise RuntimeError(f"warm-up produce to {topic} failed: {errors[:3]}")
    produce, poll = producer.produce, producer.poll
    with _no_gc():
        started = time.perf_counter()
        for _ in range(count):
            try:
                produce(topic, value)
            except BufferError:  # the local queue is full: let librdkafka drain it
                poll(0.01)
                produce(topic, value)
        left = producer.flush(120)
        elapsed = time.perf_counter() - started
    if left or errors:
        raise RuntimeError(f"produce to {topic}: {left} records unacknowledged, errors {errors[:3]}")
    return count / elapsed


def consume_rate(bootstrap: str, topic: str, partitions: int, count: int, timeout_s: float = 120) -> float:
    """Records/s reading the first `count` records of the topic's partitions with one consumer
    (assigned, no group), from the first records' arrival (connections open, offsets looked
    up) until the last one's. consume() is asked for no more than are left, as it waits for that
    many or its timeout."""
    consumer = _consumer(bootstrap)
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        got, first, started = 0, 0, None
        deadline = time.monotonic() + timeout_s
        with _no_gc():
            while got < count:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"consumed {got} of {count} records of {topic} within {timeout_s} s")
                messages = consumer.consume(min(10_000, count - got), 1.0)
                bad = next((m.error() for m in messages if m.error()), None)
                if bad is not None:
                    raise KafkaException(bad)
                got += len(messages)
                if started is None and messages:
                    started, first = time.perf_counter(), got
            elapsed = time.perf_counter() - started
        if got == first:
            raise RuntimeError(f"{topic}: every record came in the first consume(); take more records")
        return (got - first) / elapsed
    finally:
        consumer.close()


def _percentiles_ms(seconds: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return cuts[49] * 1000, cuts[98] * 1000


def produce_latencies(bootstrap: str, topic: str, samples: int, size: int = 100) -> tuple[float, float]:
    """(p50, p99) ms from produce() of one record (partition 0, linger.ms 0, acks=1) until its
    acknowledgement, one record at a time."""
    errors: list = []
    producer = _producer(bootstrap, errors, acks="1", **{"linger.ms": 0})
    value, took = bytes(size), []
    for _ in range(samples + 1):  # the first opens the connection and is dropped
        started = time.perf_counter()
        producer.produce(topic, value, partition=0)
        if producer.flush(10) or errors:
            raise RuntimeError(f"produce to {topic} not acknowledged within 10 s: {errors[:3]}")
        took.append(time.perf_counter() - started)
    return _percentiles_ms(took[1:])


def e2e_latencies(bootstrap: str, topic: str, samples: int, size: int = 100) -> tuple[float, float]:
    """(p50, p99) ms from produce() of one record (as above) until a consumer, long-polling with
    librdkafka's default fetch.wait.max.ms (500), hands it over: how soon a broker answers a
    waiting Fetch after an append."""
    errors: list = []
    producer = _producer(bootstrap, errors, acks="1", **{"linger.ms": 0})
    consumer = _consumer(bootstrap)
    value, took = bytes(size), []
    try:
        _, end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, end)])
        for _ in range(samples + 1):  # the first starts the fetching and is dropped
            started = time.perf_counter()
            producer.produce(topic, value, partition=0)
            message = consumer.poll(10)
            if message is None or message.error():
                raise RuntimeError(f"consume from {topic}: {message and message.error()}")
            took.append(time.perf_counter() - started)
            producer.poll(0)
        if producer.flush(10) or errors:
            raise RuntimeError(f"produce to {topic}: {errors[:3]}")
    finally:
        consumer.close()
    return _percentiles_ms(took[1:])


def topic_usable_s(bootstrap: str, topics: list[str], partitions: int = 3, replicas: int = 3,
                   timeout_s: float = 30) -> list[tuple[float, float]]:
    """For each name in turn: (seconds from create_topics() until its answer, seconds from
    create_topics() until the first record produced to the new topic is acknowledged), as a test
    that makes its own topic sees it. The admin client and the producer (acks=all, linger.ms 0, a
    record without key or partition: librdkafka's partitioner picks one) are connected to every
    broker before the first create; the admin client's defaults otherwise (operation_timeout 0)."""
    admin = AdminClient(_config(bootstrap))
    errors: list = []
    producer = _producer(bootstrap, errors, acks="all", **{"linger.ms": 0})
    warm = f"usable-warm-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, warm, partitions, replicas, timeout_s)
    for partition in range(partitions):  # a connection to each partition's leader
        producer.produce(warm, b"warm", partition=partition)
    if producer.flush(timeout_s) or errors:
        raise RuntimeError(f"warm-up produce to {warm} failed: {errors[:3]}")
    out = []
    for name in topics:
        done: list[float] = []
        started = time.perf_counter()
        admin.create_topics([NewTopic(name, partitions, replicas)])[name].result(timeout_s)
        created = time.perf_counter()
        producer.produce(name, b"first", on_delivery=lambda err, _m: done.append(time.perf_counter())
                         if err is None else errors.append(err))
        if producer.flush(timeout_s) or errors or not done:
            raise RuntimeError(f"the first produce to {name} not acknowledged within {timeout_s} s: {errors[:3]}")
        out.append((created - started, done[0] - started))
    return out


def failover_s(bootstrap: str, topic: str, kill: Callable[[int], None], timeout_s: float = 60,
               leader_now: Callable[[int], int] | None = None) -> tuple[float, float | None]:
    """(seconds from SIGKILLing partition 0's leader (`kill(broker_id)`) until an acks=all record
    sent right after it is acknowledged (librdkafka retrying and refreshing metadata meanwhile),
    seconds until `leader_now(killed)` (partition 0's leader as a surviving broker's Metadata
    names it, polled every 10 ms) first names another live leader: the brokers' part, None
    without `leader_now`)."""
    errors: list = []
    producer = _producer(bootstrap, errors, acks="all", **{"linger.ms": 0, "message.timeout.ms": int(timeout_s * 1000)})
    producer.produce(topic, b"before", partition=0)
    if producer.flush(30) or errors:
        raise RuntimeError(f"produce to {topic} before the kill failed: {errors[:3]}")
    leader = producer.list_topics(topic, timeout=10).topics[topic].partitions[0].leader
    done: list[float] = []
    moved: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set() and not moved:
            try:
                if leader_now(leader) not in (-1, leader):
                    moved.append(time.perf_counter())
            except Exception:  # a refused or timed-out Metadata: ask again
                pass
            stop.wait(0.01)

    poller = threading.Thread(target=poll, name="failover-leader-poll", daemon=True)
    started = time.perf_counter()
    kill(leader)
    if leader_now is not None:
        poller.start()
    producer.produce(topic, b"after", partition=0,
                     on_delivery=lambda err, _m: done.append(time.perf_counter()) if err is None else errors.append(err))
    producer.flush(timeout_s)
    stop.set()
    if leader_now is not None:
        poller.join(10)
    if not done:
        raise RuntimeError(f"no acknowledged produce to {topic} within {timeout_s} s of the kill: {errors[:3]}")
    return done[0] - started, (moved[0] - started if moved else None)


def enqueue_ceiling(size: int, count: int) -> float:
    """Records/s of produce() alone: the Python loop and librdkafka's enqueue, no broker reached."""
    producer = Producer(_config("127.0.0.1:1", **QUEUE, **{"log_level": 0}))
    value, produce = bytes(size), producer.produce
    with _no_gc():
        started = time.perf_counter()
        for _ in range(count):
            produce("ceiling", value)
        elapsed = time.perf_counter() - started
    producer.purge()
    return count / elapsed


def mock_ceiling(size: int, count: int) -> float:
    """Records/s produced to librdkafka's mock cluster: a broker in C inside this process,
    answering over loopback, as near a null sink as a Kafka client gets. (Its partitions keep only
    their newest batches, so it cannot serve as the consume ceiling.)"""
    errors: list = []
    producer = Producer({"test.mock.num.brokers": 1, "logger": _quiet, "acks": "1", **QUEUE,
                         "on_delivery": lambda err, _m: err and errors.append(err), "delivery.report.only.error": True})
    producer.produce("ceiling", bytes(size))  # the mock cluster creates the topic on first use
    if producer.flush(10) or errors:
        raise RuntimeError(f"mock cluster produce failed: {errors[:3]}")
    value, produce = bytes(size), producer.produce
    with _no_gc():
        started = time.perf_counter()
        for _ in range(count):
            produce("ceiling", value)
        left = producer.flush(60)
        elapsed = time.perf_counter() - started
    if left or errors:
        raise RuntimeError(f"mock cluster produce failed: {errors[:3]}")
    return count / elapsed
