"""Transactions with real clients on the shared cluster (issue 13, "Done means"): a confluent-kafka
transactional producer commits and aborts; read_committed consumers see only committed records,
read_uncommitted both; send_offsets_to_transaction commits the group's offsets with the output;
a second producer with the same transactional id fences the first."""

import time

import pytest

from tests.admin_helpers import create_topics, topic_spec, unique
from tests.harness import wait_for

PARTITIONS = 3


def _topic(cluster, partitions: int = PARTITIONS) -> str:
    name = unique("txn")
    [result] = create_topics(cluster.controller_address(), [topic_spec(name, partitions, 3)])
    assert int(result.error_code) == 0, result
    return name


def _producer(cluster, transactional_id: str, **extra):
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": transactional_id, **extra})
    producer.init_transactions(60)
    return producer


def _read(cluster, topic: str, isolation: str, expect: int, timeout_s: float = 30, partitions: int = PARTITIONS) -> list:
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"), "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "isolation.level": isolation, "enable.partition.eof": True})
    c.subscribe([topic])
    got, eof = [], set()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and (len(got) < expect or len(eof) < partitions):
        msg = c.poll(0.2)
        if msg is None:
            continue
        if msg.error() is not None:
            eof.add(msg.partition())
            continue
        got.append(msg.value())
    c.close()
    return got


def test_commit_and_abort_read_committed_and_uncommitted(cluster):
    topic = _topic(cluster)
    p = _producer(cluster, unique("tid"))
    p.begin_transaction()
    for i in range(9):
        p.produce(topic, f"c{i}".encode(), partition=i % PARTITIONS)
    p.commit_transaction(30)
    p.begin_transaction()
    for i in range(6):
        p.produce(topic, f"a{i}".encode(), partition=i % PARTITIONS)
    p.flush(30)
    p.abort_transaction(30)
    p.begin_transaction()
    p.produce(topic, b"c9", partition=0)
    p.commit_transaction(30)
    committed = _read(cluster, topic, "read_committed", 10)
    assert sorted(committed) == sorted([f"c{i}".encode() for i in range(10)])
    everything = _read(cluster, topic, "read_uncommitted", 16)
    assert sorted(everything) == sorted([f"c{i}".encode() for i in range(10)] + [f"a{i}".encode() for i in range(6)])


def test_open_transaction_holds_the_last_stable_offset(cluster):
    from confluent_kafka import Consumer, TopicPartition
    topic = _topic(cluster, 1)
    p = _producer(cluster, unique("tid"))
    p.begin_transaction()
    p.produce(topic, b"pending", partition=0)
    p.flush(30)
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"), "isolation.level": "read_committed"})
    low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)
    assert (low, high) == (0, 0)  # read_committed's latest offset is the last stable offset
    p.commit_transaction(30)  # answered once PrepareCommit is written; the marker follows
    wait_for(lambda: c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1] == 2, 10,
             what="the last stable offset past the record and the COMMIT marker")
    c.close()


def test_send_offsets_to_transaction_commits_offsets_with_the_output(cluster):
    from confluent_kafka import Consumer, TopicPartition
    source, sink, group = _topic(cluster), _topic(cluster), unique("g")
    seed = _producer(cluster, unique("seed"))
    seed.begin_transaction()
    for i in range(6):
        seed.produce(source, f"s{i}".encode(), partition=i % PARTITIONS)
    seed.commit_transaction(30)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    consumer.subscribe([source])
    seen = []
    deadline = time.monotonic() + 30
    while len(seen) < 6 and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            seen.append(msg)
    assert len(seen) == 6
    p = _producer(cluster, unique("tid"))
    offsets = [TopicPartition(source, part, 2 + 1) for part in range(PARTITIONS)]  # 2 records + marker each
    # an aborted attempt first: its offsets must not become visible
    p.begin_transaction()
    p.produce(sink, b"out-aborted", partition=0)
    p.send_offsets_to_transaction([TopicPartition(source, 0, 1)], consumer.consumer_group_metadata(), 30)
    p.abort_transaction(30)
    time.sleep(1)  # the ABORT marker's way to the group coordinator
    assert [tp.offset for tp in consumer.committed([TopicPartition(source, 0)], timeout=10)] == [-1001]
    p.begin_transaction()
    for m in seen:
        p.produce(sink, m.value(), partition=m.partition())
    p.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 30)
    p.commit_transaction(30)
    wait_for(lambda: sorted(tp.offset for tp in consumer.committed(
        [TopicPartition(source, part) for part in range(PARTITIONS)], timeout=10)) == [3] * PARTITIONS, 10,
        what="the transaction's offsets committed in the group")
    consumer.close()
    assert sorted(_read(cluster, sink, "read_committed", 6)) == sorted(m.value() for m in seen)


def test_a_second_producer_with_the_same_id_fences_the_first(cluster):
    from confluent_kafka import KafkaException
    topic, tid = _topic(cluster), unique("tid")
    first = _producer(cluster, tid)
    first.begin_transaction()
    first.produce(topic, b"zombie", partition=0)
    first.flush(30)
    second = _producer(cluster, tid)  # aborts the first's open transaction and bumps the epoch
    second.begin_transaction()
    second.produce(topic, b"winner", partition=1)
    second.commit_transaction(30)
    with pytest.raises(KafkaException) as raised:
        first.produce(topic, b"late", partition=0)
        first.commit_transaction(30)
    assert raised.value.args[0].fatal() or "fenced" in str(raised.value).lower()
    assert _read(cluster, topic, "read_committed", 1) == [b"winner"]


def test_an_invalid_timeout_is_refused_before_any_state_and_the_id_stays_usable(cluster):
    """librdkafka's 0103 do_test_misuse_txn: transaction.timeout.ms above transaction.max.timeout.ms
    is INVALID_TRANSACTION_TIMEOUT, fatal for that producer; Kafka refuses it before writing anything
    for the id (DescribeTransactions: TRANSACTIONAL_ID_NOT_FOUND), so a producer with the same id and
    a valid timeout inits at once and commits."""
    from confluent_kafka import KafkaError, KafkaException, Producer
    from tests.admin_helpers import send
    topic, tid = _topic(cluster), unique("tid")
    refused = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": tid,
                        "transaction.timeout.ms": "2147483647"})
    with pytest.raises(KafkaException) as raised:
        refused.init_transactions(60)
    error = raised.value.args[0]
    assert error.code() == KafkaError.INVALID_TRANSACTION_TIMEOUT and error.fatal()
    found = send(cluster.bootstrap.split(",")[0], 10, 3, {"key": tid, "key_type": 1})
    assert int(found.error_code) == 0
    described = send(f"{found.host}:{found.port}", 65, 0, {"transactional_ids": [tid]})
    assert [int(s.error_code) for s in described.transaction_states] == [105]  # TRANSACTIONAL_ID_NOT_FOUND
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": tid})
    producer.init_transactions(20)
    producer.begin_transaction()
    producer.produce(topic, b"valid", partition=0)
    producer.commit_transaction(30)
    assert _read(cluster, topic, "read_committed", 1) == [b"valid"]


def test_a_transaction_past_its_timeout_is_aborted_by_the_coordinator(cluster):
    from confluent_kafka import Consumer, KafkaException, TopicPartition
    topic = _topic(cluster, 1)
    p = _producer(cluster, unique("tid"), **{"transaction.timeout.ms": 2000})
    p.begin_transaction()
    p.produce(topic, b"stuck", partition=0)
    p.flush(30)
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"), "isolation.level": "read_committed"})
    assert c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1] == 0
    # transaction.abort.timed.out.transaction.cleanup.interval.ms is Kafka's 10 s on the shared cluster
    wait_for(lambda: c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1] == 2, 25,
             what="the coordinator's ABORT marker")
    c.close()
    with pytest.raises(KafkaException):
        p.commit_transaction(30)
    assert _read(cluster, topic, "read_committed", 0, timeout_s=10, partitions=1) == []
    assert _read(cluster, topic, "read_uncommitted", 1, partitions=1) == [b"stuck"]


def test_kafka_python_transactional_producer_commits_and_aborts(cluster):
    from kafka import KafkaProducer
    topic = _topic(cluster)
    p = KafkaProducer(bootstrap_servers=cluster.bootstrap, transactional_id=unique("kp"))
    p.init_transactions()
    p.begin_transaction()
    for i in range(3):
        p.send(topic, f"kc{i}".encode(), partition=i)
    p.commit_transaction()
    p.begin_transaction()
    p.send(topic, b"ka", partition=0)
    p.flush()
    p.abort_transaction()
    p.close()
    assert sorted(_read(cluster, topic, "read_committed", 3)) == [b"kc0", b"kc1", b"kc2"]
    assert sorted(_read(cluster, topic, "read_uncommitted", 4)) == [b"ka", b"kc0", b"kc1", b"kc2"]
