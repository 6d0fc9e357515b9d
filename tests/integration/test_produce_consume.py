"""Real clients produce and read back through the shared 3-broker cluster: every codec, keys,
headers, timestamps and order per partition survive (issue 11, "Done means")."""

import asyncio
import shutil
import subprocess
import time

import pytest

from tests.admin_helpers import KEEP_OLD_RECORDS, create_topics, topic_spec, unique

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
COUNT = 50
BASE_TS = 1_700_000_000_000


def _topic(cluster, partitions: int = 1, rf: int = 3, configs: dict | None = None) -> str:
    name = unique("pc")
    spec = topic_spec(name, partitions, rf, configs={**KEEP_OLD_RECORDS, **(configs or {})})
    [result] = create_topics(cluster.controller_address(), [spec])
    assert int(result.error_code) == 0, result
    return name


def _expected(codec: str) -> list[tuple[bytes, bytes, list[tuple[str, bytes]], int]]:
    return [(f"k{i}".encode(), f"{codec}-value-{i}-".encode() * 5, [("h", str(i).encode()), ("codec", codec.encode())],
             BASE_TS + i) for i in range(COUNT)]


@pytest.mark.parametrize("codec", CODECS)
def test_confluent_kafka_round_trip(cluster, codec):
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic = _topic(cluster)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "compression.type": codec, "acks": "all",
                         "linger.ms": 5})
    failures = []
    for key, value, headers, ts in _expected(codec):
        producer.produce(topic, value, key, partition=0, headers=headers, timestamp=ts,
                         on_delivery=lambda err, msg: err and failures.append(err))
    assert producer.flush(30) == 0
    assert failures == []
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"),
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < COUNT and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        assert msg.error() is None, msg.error()
        got.append((msg.key(), msg.value(), list(msg.headers() or []), msg.timestamp()[1], msg.offset()))
    consumer.close()
    assert [(k, v, h, t) for k, v, h, t, _ in got] == _expected(codec)
    assert [o for *_, o in got] == list(range(COUNT))


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_round_trip(cluster, codec):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    topic = _topic(cluster)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", enable_idempotence=False,
                             compression_type=None if codec == "none" else codec)
    futures = [producer.send(topic, value=v, key=k, headers=h, partition=0, timestamp_ms=t)
               for k, v, h, t in _expected(codec)]
    producer.flush(30)
    assert [f.get(10).offset for f in futures] == list(range(COUNT))
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest", consumer_timeout_ms=10000)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = []
    for msg in consumer:
        got.append((msg.key, msg.value, list(msg.headers), msg.timestamp))
        if len(got) == COUNT:
            break
    consumer.close()
    assert got == _expected(codec)


@pytest.mark.parametrize("codec", CODECS)
def test_aiokafka_round_trip(cluster, codec):
    import aiokafka
    from aiokafka import TopicPartition

    topic = _topic(cluster)

    async def run():
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all",
                                             compression_type=None if codec == "none" else codec)
        await producer.start()
        try:
            for k, v, h, t in _expected(codec):
                await producer.send(topic, value=v, key=k, headers=h, partition=0, timestamp_ms=t)
            await producer.flush()
        finally:
            await producer.stop()
        consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap, group_id=None,
                                             enable_auto_commit=False, auto_offset_reset="earliest")
        await consumer.start()
        got = []
        try:
            consumer.assign([TopicPartition(topic, 0)])
            await consumer.seek_to_beginning(TopicPartition(topic, 0))
            deadline = time.monotonic() + 30
            while len(got) < COUNT and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=1000)
                for messages in batches.values():
                    got += [(m.key, m.value, list(m.headers), m.timestamp) for m in messages]
        finally:
            await consumer.stop()
        return got

    assert asyncio.run(run()) == [(k, v, h, t) for k, v, h, t in _expected(codec)]


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed")
@pytest.mark.parametrize("codec", CODECS)
def test_kcat_round_trip(cluster, codec):
    topic = _topic(cluster)
    lines = "".join(f"key{i}:line {i} of {codec}\n" for i in range(COUNT))
    out = subprocess.run(["kcat", "-P", "-b", cluster.bootstrap, "-t", topic, "-p", "0", "-K", ":", "-z", codec,
                          "-H", "origin=kcat", "-X", "request.required.acks=-1"],
                         input=lines, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "still in queue" not in out.stderr
    out = subprocess.run(["kcat", "-C", "-b", cluster.bootstrap, "-t", topic, "-p", "0", "-o", "beginning", "-e",
                          "-c", str(COUNT), "-f", "%k=%s|%h|%o\n"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"key{i}=line {i} of {codec}|origin=kcat|{i}" for i in range(COUNT)]


def test_keys_spread_over_partitions_keep_order_per_partition(cluster):
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic = _topic(cluster, partitions=3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(300):
        producer.produce(topic, str(i).encode(), f"key-{i % 7}".encode())
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"),
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(3)])
    got: dict[bytes, list[int]] = {}
    deadline, seen = time.monotonic() + 30, 0
    while seen < 300 and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is None or msg.error():
            continue
        got.setdefault(msg.key(), []).append(int(msg.value()))
        seen += 1
    consumer.close()
    assert seen == 300
    for key, values in got.items():
        assert values == sorted(values), key  # one key, one partition, produce order


def test_idempotent_producers_get_producer_ids_and_produce(cluster):
    """kafka-python 3 is idempotent by default (InitProducerId first); confluent-kafka when asked."""
    from confluent_kafka import Producer
    from kafka import KafkaProducer

    topic = _topic(cluster)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all")
    assert producer.config["enable_idempotence"]
    offsets = [producer.send(topic, f"kp-{i}".encode(), partition=0).get(15).offset for i in range(20)]
    producer.close()
    assert offsets == list(range(20))
    idempotent = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True})
    delivered = []
    for i in range(20):
        idempotent.produce(topic, f"ck-{i}".encode(), partition=0,
                           on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
    assert idempotent.flush(30) == 0
    assert delivered == [(None, 20 + i) for i in range(20)]


def test_two_producer_ids_differ(cluster):
    from tests.admin_helpers import send

    answers = [send(cluster.bootstrap.split(",")[i], 22, 5, {"transactional_id": None, "transaction_timeout": 60000,
                                                             "producer_id": -1, "producer_epoch": -1})
               for i in range(3)]
    assert [int(a.error_code) for a in answers] == [0, 0, 0]
    assert len({a.producer_id for a in answers}) == 3 and all(a.producer_epoch == 0 for a in answers)
    # a transactional id goes to its coordinator: NOT_COORDINATOR elsewhere (COORDINATOR_NOT_AVAILABLE
    # while __transaction_state is not there yet; other tests of the session may have made it)
    codes = [int(send(address, 22, 5, {"transactional_id": "tx", "transaction_timeout": 60000,
                                       "producer_id": -1, "producer_epoch": -1}).error_code)
             for address in cluster.bootstrap.split(",")]
    assert set(codes) <= {0, 15, 16} and codes.count(0) <= 1, codes
    if 0 in codes:
        assert sorted(codes) == [0, 16, 16], codes


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed")
# librdkafka 2.0.2's LZ4 feature also needs FindCoordinator v0 (rdkafka_feature.c), which groups brought
@pytest.mark.parametrize("codec,bits", [("gzip", 1), ("snappy", 2), ("lz4", 3), ("zstd", 4)])
def test_kcat_batches_are_stored_compressed(cluster, codec, bits):
    """Debian's kcat links librdkafka 2.0.2, which compresses gzip/snappy/lz4 only when the broker
    advertises Produce v0 (librdkafka#4956): the stored batch shows the codec it really sent."""
    from tests.data_helpers import fetch, leader_of

    topic = _topic(cluster)
    lines = "".join(f"line {i} {'x' * 300}\n" for i in range(20))  # compressible: librdkafka sends a batch
    out = subprocess.run(["kcat", "-P", "-b", cluster.bootstrap, "-t", topic, "-p", "0", "-z", codec],  # plain when
                         input=lines, capture_output=True, text=True, timeout=60)  # compressing does not shrink it
    assert out.returncode == 0, out.stderr
    records = fetch(cluster.address_of(leader_of(cluster, topic)), topic, 0, 0).responses[0].partitions[0].records
    attributes = int.from_bytes(records[21:23], "big")
    assert attributes & 0x7 == bits
