"""Transaction faults, each on its own cluster (issue 13): the transaction coordinator killed right
after EndTxn is answered (before or while its markers go out): the coordinator that takes over its
__transaction_state partition finishes the commit it replays, once; a partition leader killed with
a transaction open: the producer's retries and the markers go to the new leader and the last
stable offset ends right."""

import signal
import time

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.data_helpers import leader_of
from tests.harness import wait_for

PARTITIONS = 3
# small __transaction_state so the cluster creates it quickly; 3 replicas, min.isr 2 as Kafka's defaults
OVERRIDES = {"transaction.state.log.num.partitions": "3", "offsets.topic.num.partitions": "3"}


def _setup(cluster):
    topic = unique("txf")
    [result] = create_topics(cluster.controller_address(), [topic_spec(topic, PARTITIONS, 3)])
    assert int(result.error_code) == 0
    return topic


def _coordinator(cluster, tid: str) -> int:
    def found():
        for broker_id in cluster.brokers:  # any broker that answers: the first may be the one killed
            try:
                r = send(cluster.address_of(broker_id), 10, 3, {"key": tid, "key_type": 1}, timeout_s=5)
            except (OSError, TimeoutError):
                continue
            if int(r.error_code) == 0:
                return int(r.node_id)
        return None
    return wait_for(found, 30, 0.2, "the transaction coordinator")


def _producer(cluster, tid: str):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": tid, "acks": "all"})
    p.init_transactions(60)
    return p


def _read_committed(cluster, topic: str, expect: int, timeout_s: float = 60) -> list[bytes]:
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"), "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "isolation.level": "read_committed"})
    c.subscribe([topic])
    got = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and len(got) < expect:
        msg = c.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    end = time.monotonic() + 2  # nothing more may come (no duplicate of the transaction)
    while time.monotonic() < end:
        msg = c.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    c.close()
    return got


def test_coordinator_killed_after_end_txn_commits_once(make_cluster):
    cluster = make_cluster(3, OVERRIDES)
    topic, tid = _setup(cluster), unique("tid")
    p = _producer(cluster, tid)
    victim = _coordinator(cluster, tid)
    p.begin_transaction()
    for i in range(9):
        p.produce(topic, f"r{i}".encode(), partition=i % PARTITIONS)
    p.flush(30)
    p.commit_transaction(30)  # PrepareCommit is replicated; the markers may not be
    cluster.brokers[victim].signal(signal.SIGKILL)
    got = _read_committed(cluster, topic, 9)
    assert sorted(got) == sorted(f"r{i}".encode() for i in range(9))
    assert wait_for(lambda: _coordinator(cluster, tid) != victim, 30, 0.2, "a new coordinator")
    again = _producer(cluster, tid)  # the new coordinator's state is CompleteCommit: a plain epoch bump
    again.begin_transaction()
    again.produce(topic, b"after", partition=0)
    again.commit_transaction(30)
    assert sorted(_read_committed(cluster, topic, 10)) == sorted([f"r{i}".encode() for i in range(9)] + [b"after"])


def test_partition_leader_killed_with_an_open_transaction(make_cluster):
    from confluent_kafka import Consumer, TopicPartition
    cluster = make_cluster(3, OVERRIDES)
    topic, tid = _setup(cluster), unique("tid")
    p = _producer(cluster, tid)
    coordinator = _coordinator(cluster, tid)
    victim = next(leader_of(cluster, topic, i) for i in range(PARTITIONS) if leader_of(cluster, topic, i) != coordinator)
    p.begin_transaction()
    for i in range(6):
        p.produce(topic, f"r{i}".encode(), partition=i % PARTITIONS)
    p.flush(30)
    cluster.brokers[victim].signal(signal.SIGKILL)
    for i in range(6, 9):
        p.produce(topic, f"r{i}".encode(), partition=i % PARTITIONS)
    p.flush(60)
    p.commit_transaction(60)
    assert sorted(_read_committed(cluster, topic, 9)) == sorted(f"r{i}".encode() for i in range(9))
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"), "isolation.level": "read_committed"})
    for i in range(PARTITIONS):  # 3 records and one COMMIT marker each: the LSO is the log end
        wait_for(lambda i=i: c.get_watermark_offsets(TopicPartition(topic, i), timeout=10, cached=False)[1] == 4,
                 20, what=f"LSO of partition {i}")
    c.close()


def test_group_coordinator_killed_between_send_offsets_and_commit(make_cluster):
    from confluent_kafka import Consumer, Producer, TopicPartition
    cluster = make_cluster(3, OVERRIDES)
    source, sink, group = _setup(cluster), _setup(cluster), unique("g")
    plain = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(6):
        plain.produce(source, f"s{i}".encode(), partition=i % PARTITIONS)
    assert plain.flush(30) == 0

    def group_coordinator():
        r = send(cluster.bootstrap.split(",")[0], 10, 3, {"key": group, "key_type": 0})
        return int(r.node_id) if int(r.error_code) == 0 else None
    victim = wait_for(group_coordinator, 30, 0.2, "the group coordinator")
    tid = next(t for t in (unique("tid") for _ in range(50)) if _coordinator(cluster, t) != victim)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False})
    p = _producer(cluster, tid)
    p.begin_transaction()
    p.produce(sink, b"out", partition=0)
    p.send_offsets_to_transaction([TopicPartition(source, i, 2) for i in range(PARTITIONS)],
                                  consumer.consumer_group_metadata(), 30)
    cluster.brokers[victim].signal(signal.SIGKILL)  # the offsets are in __consumer_offsets, uncommitted
    p.commit_transaction(60)  # the marker reaches the partition's new leader, which replayed them

    def committed():
        got = consumer.committed([TopicPartition(source, i) for i in range(PARTITIONS)], timeout=5)
        return sorted(tp.offset for tp in got) == [2] * PARTITIONS
    wait_for(committed, 40, 0.5, "the transaction's offsets committed at the new group coordinator")
    consumer.close()
    assert _read_committed(cluster, sink, 1) == [b"out"]
