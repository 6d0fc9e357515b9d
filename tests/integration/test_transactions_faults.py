"""Transaction faults, each on its own cluster (issue 13): the transaction coordinator killed right
after EndTxn is answered (before or while its markers go out): the coordinator that takes over its
__transaction_state partition finishes the commit it replays, once; a partition leader killed with
a transaction open: the producer's retries and the markers go to the new leader and the last
stable offset ends right."""

import json
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


def _coordinator(cluster, tid: str, dead: int | None = None) -> int:
    """The id's coordinator as FindCoordinator answers it, asked of a broker that is not `dead`."""
    address = cluster.address_of(min(b for b in cluster.brokers if b != dead))

    def found():
        r = send(address, 10, 3, {"key": tid, "key_type": 1})
        return int(r.node_id) if int(r.error_code) == 0 and int(r.node_id) != dead else None
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
    _coordinator(cluster, tid, dead=victim)  # a new coordinator (the victim may be the first bootstrap broker)
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


def test_a_commit_is_stable_only_once_its_marker_is_replicated(make_cluster):
    """Kafka's LSO = min(first unstable offset, HW): a COMMIT marker on the leader that a paused
    follower (still in the ISR) has not fetched keeps the transaction unstable, for read_committed
    Fetch and ListOffsets alike; once the follower fetches it, the LSO is the log end."""
    from tests.data_helpers import fetch, list_offset
    cluster = make_cluster(3, {**OVERRIDES, "transaction.state.log.replication.factor": "1",
                               "replica.lag.time.max.ms": "60000"})  # the paused follower stays in the ISR
    topic, tid = unique("txs"), unique("tid")
    [result] = create_topics(cluster.controller_address(), [topic_spec(topic, 1, 3)])
    assert int(result.error_code) == 0
    p = _producer(cluster, tid)
    coordinator, leader = _coordinator(cluster, tid), leader_of(cluster, topic)
    paused = next(b for b in sorted(cluster.brokers) if b not in (coordinator, leader))
    address = cluster.address_of(leader)
    p.begin_transaction()
    for i in range(5):
        p.produce(topic, f"r{i}".encode(), partition=0)
    p.flush(30)  # acks=all: offsets 0-4 are on every replica, the high watermark is 5

    def open_txn_start():
        r = send(address, 61, 0, {"topics": [{"name": topic, "partition_indexes": [0]}]})
        return [int(s.current_txn_start_offset) for s in r.topics[0].partitions[0].active_producers]

    def marks():
        part = fetch(address, topic, 0, 0, isolation_level=1).responses[0].partitions[0]
        return int(part.high_watermark), int(part.last_stable_offset)

    wait_for(lambda: marks() == (5, 0), 20, what="the open transaction holding the LSO at 0")
    cluster.brokers[paused].signal(signal.SIGSTOP)
    try:
        p.commit_transaction(30)  # PrepareCommit is answered; the marker waits for the paused follower
        wait_for(lambda: open_txn_start() == [-1], 20, what="the COMMIT marker on the leader")
        assert marks() == (5, 0)
        assert int(list_offset(address, topic, 0, -1, isolation_level=1).offset) == 0
        assert int(list_offset(address, topic, 0, -1, isolation_level=0).offset) == 5
    finally:
        cluster.brokers[paused].signal(signal.SIGCONT)
    wait_for(lambda: marks() == (6, 6), 30, what="the marker replicated and the transaction stable")
    assert int(list_offset(address, topic, 0, -1, isolation_level=1).offset) == 6
    assert sorted(_read_committed(cluster, topic, 5)) == [f"r{i}".encode() for i in range(5)]


def test_a_lagging_in_sync_follower_delays_a_transaction_state_write_without_failing_it(make_cluster):
    """TransactionStateManager.appendTransactionToLog waits for acks=all up to the transaction's own
    timeout: a follower that stopped fetching but is still in the ISR holds the write until
    replica.lag.time.max.ms drops it from the ISR, and then the write is answered NONE (fauxka waited
    5 s and answered COORDINATOR_NOT_AVAILABLE again and again on a loaded machine)."""
    from fauxka.coordinator.partitioner import partition_for
    # the paused follower keeps its ZooKeeper session (else the controller takes it out of the ISR at once)
    cluster = make_cluster(3, {**OVERRIDES, "replica.lag.time.max.ms": "8000", "zookeeper.session.timeout.ms": "30000"})
    tid = unique("tid")
    coordinator = _coordinator(cluster, tid)  # creates __transaction_state
    partition = partition_for(tid, 3)

    def isr():
        response = send(cluster.address_of(coordinator), 3, 12, {
            "topics": [{"name": "__transaction_state", "topic_id": None}], "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False})
        return sorted(next(p for p in response.topics[0].partitions if p.partition_index == partition).isr_nodes)
    wait_for(lambda: len(isr()) == 3, 30, 0.2, "three in-sync replicas of the id's partition")
    # not the controller: the new id's producer id block comes from it (a paused controller answers
    # COORDINATOR_LOAD_IN_PROGRESS through the coordinator, as Kafka's would)
    paused = next(b for b in isr() if b not in (coordinator, cluster.controller_id()))
    init = {"transactional_id": tid, "transaction_timeout": 60000, "producer_id": -1, "producer_epoch": -1}
    cluster.brokers[paused].signal(signal.SIGSTOP)
    try:
        answer = send(cluster.address_of(coordinator), 22, 4, init, timeout_s=90)
        assert int(answer.error_code) == 0 and int(answer.producer_epoch) == 0
        # it was waited for until the ISR shrank: the shrink is in ZooKeeper (the store of record,
        # written before the leader's high watermark may pass the paused follower) when the write
        # is answered; Metadata follows with the controller's UpdateMetadata, later (as in Kafka)
        state = json.loads(cluster.zk_get(f"/brokers/topics/__transaction_state/partitions/{partition}/state"))
        assert paused not in state["isr"], state
        wait_for(lambda: paused not in isr(), 30, 0.2, "Metadata without the paused follower in the ISR")
    finally:
        cluster.brokers[paused].signal(signal.SIGCONT)
