"""The data plane under faults, each test on its own cluster (issue 11, "Done means"):
a killed leader loses no acknowledged record, a stopped broker troubles no client, a restarted
broker catches up and rejoins the ISR, a whole-cluster restart brings every acknowledged record
back, and a torn log tail is cut at recovery."""

import signal
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.harness import wait_for

FAST = {"replica.lag.time.max.ms": "3000", "replica.fetch.backoff.ms": "200"}


class Load:
    """A confluent-kafka producer (acks=all) sending numbers to one topic from a thread; it keeps
    what was acknowledged and what failed."""

    def __init__(self, bootstrap: str, topic: str, partitions: int):
        self.topic, self.partitions = topic, partitions
        self.acked: dict[int, set[int]] = {p: set() for p in range(partitions)}
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2,
                                   "message.timeout.ms": 60000, "retries": 1000000, "retry.backoff.ms": 100,
                                   "enable.idempotence": False, "max.in.flight.requests.per.connection": 1})
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, err, msg) -> None:
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acked[msg.partition()].add(int(msg.value()))

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            try:
                self._producer.produce(self.topic, str(n).encode(), partition=n % self.partitions,
                                       on_delivery=self._delivered)
                n += 1
            except BufferError:
                pass
            self._producer.poll(0.002)
        self._producer.flush(60)
        self._producer = None  # no client left reconnecting to a stopped cluster

    def start(self) -> "Load":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(90)

    def count(self) -> int:
        return sum(len(a) for a in self.acked.values())


def _topic(cluster, partitions: int = 1, rf: int = 3, min_isr: int = 2) -> str:
    name = unique("rf")
    [result] = create_topics(cluster.controller_address(), [topic_spec(name, partitions, rf,
                                                                         configs={"min.insync.replicas": str(min_isr)})])
    assert int(result.error_code) == 0, result
    return name


def _state(cluster, topic: str, partition: int = 0, via: int | None = None):
    """(leader, isr) as a live broker's Metadata says (the controller's by default)."""
    address = cluster.address_of(via) if via is not None else cluster.controller_address()
    response = send(address, 3, 12, {"topics": [{"name": topic, "topic_id": None}], "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": False})
    part = next(p for p in response.topics[0].partitions if p.partition_index == partition)
    return part.leader_id, sorted(part.isr_nodes)


def _read_all(bootstrap: str, topic: str, partitions: int, timeout_s: float = 60) -> dict[int, list[int]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("g"), "enable.auto.commit": False})
    got: dict[int, list[int]] = {p: [] for p in range(partitions)}
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=20)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        deadline = time.monotonic() + timeout_s
        while any(len(got[p]) < ends[p] for p in got) and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            got[msg.partition()].append(int(msg.value()))
    finally:
        consumer.close()
    return got


def _assert_nothing_acknowledged_lost(load: Load, bootstrap: str) -> None:
    got = _read_all(bootstrap, load.topic, load.partitions)
    for p in range(load.partitions):
        missing = load.acked[p] - set(got[p])
        assert not missing, f"partition {p}: {len(missing)} acknowledged records lost, e.g. {sorted(missing)[:5]}"


def test_sigkill_of_the_leader_under_acks_all_load_loses_no_acknowledged_record(make_cluster):
    cluster = make_cluster(3, FAST)
    topic = _topic(cluster)
    leader, _ = _state(cluster, topic)
    load = Load(cluster.bootstrap, topic, 1).start()
    wait_for(lambda: load.count() > 200, 30, what="records acknowledged before the kill")
    cluster.brokers[leader].signal(signal.SIGKILL)
    survivor = next(b for b in cluster.brokers if b != leader)
    wait_for(lambda: _state(cluster, topic, via=survivor)[0] not in (leader, -1), 30, what="a new leader")
    before = load.count()
    wait_for(lambda: load.count() > before + 200, 30, what="records acknowledged by the new leader")
    load.stop()
    assert load.errors == []
    _assert_nothing_acknowledged_lost(load, cluster.address_of(survivor))


def test_sigterm_of_a_broker_under_load_troubles_no_client(make_cluster):
    cluster = make_cluster(3, FAST)
    topic = _topic(cluster, partitions=3)
    load = Load(cluster.bootstrap, topic, 3).start()
    wait_for(lambda: load.count() > 300, 30, what="records acknowledged before the stop")
    leader, _ = _state(cluster, topic)
    cluster.brokers[leader].stop()
    before = load.count()
    wait_for(lambda: load.count() > before + 300, 30, what="records acknowledged after the stop")
    load.stop()
    assert load.errors == []
    survivor = next(b for b in cluster.brokers if b != leader)
    _assert_nothing_acknowledged_lost(load, cluster.address_of(survivor))


def test_a_restarted_broker_catches_up_and_rejoins_the_isr(make_cluster):
    cluster = make_cluster(3, FAST)
    topic = _topic(cluster)
    leader, isr = _state(cluster, topic)
    assert isr == [1, 2, 3]
    follower = next(b for b in cluster.brokers if b != leader)
    cluster.brokers[follower].stop()
    load = Load(cluster.bootstrap, topic, 1).start()
    wait_for(lambda: follower not in _state(cluster, topic, via=leader)[1], 30, what="the ISR shrinks")
    wait_for(lambda: load.count() > 500, 30, what="records acknowledged while the follower is away")
    cluster.brokers[follower].start()
    wait_for(lambda: _state(cluster, topic, via=leader)[1] == [1, 2, 3], 30, what="the follower back in the ISR")
    load.stop()
    assert load.errors == []


def test_a_full_cluster_restart_brings_every_acknowledged_record_back(make_cluster):
    cluster = make_cluster(3, FAST)
    topic = _topic(cluster, partitions=3)
    load = Load(cluster.bootstrap, topic, 3).start()
    wait_for(lambda: load.count() > 600, 30, what="records acknowledged")
    load.stop()
    assert load.errors == []
    for broker in cluster.brokers.values():
        broker.stop()
    for broker in cluster.brokers.values():
        broker.start()
    cluster.wait_ready(30)
    wait_for(lambda: all(_state(cluster, topic, p)[0] > 0 for p in range(3)), 30, what="leaders after the restart")
    _assert_nothing_acknowledged_lost(load, cluster.bootstrap)


def test_a_torn_log_tail_is_cut_at_recovery_and_refilled_from_the_leader(make_cluster):
    cluster = make_cluster(3, FAST)
    topic = _topic(cluster)
    load = Load(cluster.bootstrap, topic, 1).start()
    wait_for(lambda: load.count() > 300, 30, what="records acknowledged")
    load.stop()
    leader, _ = _state(cluster, topic)
    follower = next(b for b in cluster.brokers if b != leader)
    cluster.brokers[follower].stop()
    [segment] = sorted(Path(cluster.brokers[follower].work_dir / f"data-{follower}" / f"{topic}-0").glob("*.log"))
    data = segment.read_bytes()
    segment.write_bytes(data[:-7] + b"\x00garbage")  # the last batch torn and followed by junk
    cluster.brokers[follower].start()
    cluster.wait_ready(30)
    wait_for(lambda: _state(cluster, topic, via=leader)[1] == [1, 2, 3], 30, what="the follower back in the ISR")
    cluster.brokers[leader].stop()  # the repaired follower (or the other) now serves every record
    wait_for(lambda: _state(cluster, topic, via=follower)[0] not in (leader, -1), 30, what="a new leader")
    _assert_nothing_acknowledged_lost(load, cluster.address_of(follower))


def test_followers_replicate_over_a_sasl_inter_broker_listener(make_cluster):
    from tests.integration.test_sasl import OVERRIDES

    overrides = {**OVERRIDES, **FAST, "inter.broker.listener.name": "BROKER",
                 "listener.name.broker.plain.sasl.jaas.config": OVERRIDES["listener.name.client.plain.sasl.jaas.config"],
                 "listener.name.broker.sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.inter.broker.protocol": "PLAIN"}
    cluster = make_cluster(3, overrides, extra_listeners={"CLIENT": "SASL_PLAINTEXT", "BROKER": "SASL_PLAINTEXT"})
    topic = _topic(cluster, min_isr=3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    failures = []
    for i in range(100):
        producer.produce(topic, str(i).encode(), partition=0, on_delivery=lambda err, msg: err and failures.append(err))
    assert producer.flush(30) == 0 and failures == []  # min.insync.replicas=3: both followers fetched
    assert _read_all(cluster.bootstrap, topic, 1)[0] == list(range(100))


def test_acks_all_times_out_while_the_followers_are_stopped(make_cluster):
    from tests.data_helpers import batch, produce

    cluster = make_cluster(3, {"replica.lag.time.max.ms": "60000"})  # they stay in the ISR meanwhile
    topic = _topic(cluster)
    leader, _ = _state(cluster, topic)
    address = cluster.address_of(leader)
    wait_for(lambda: int(produce(address, topic, 0, batch([b"warm"]))[0].error_code) == 0, 15, what="acks=all works")
    followers = [b for b in cluster.brokers if b != leader]
    for follower in followers:
        cluster.brokers[follower].signal(signal.SIGSTOP)
    try:
        started = time.monotonic()
        part, _ = produce(address, topic, 0, batch([b"stuck"]), timeout_ms=1500)
        assert int(part.error_code) == 7  # REQUEST_TIMED_OUT, at the request's timeout
        assert 1.4 < time.monotonic() - started < 10
        assert int(produce(address, topic, 0, batch([b"one"]), acks=1)[0].error_code) == 0  # the leader appends
    finally:
        for follower in followers:
            cluster.brokers[follower].signal(signal.SIGCONT)
    wait_for(lambda: int(produce(address, topic, 0, batch([b"again"]))[0].error_code) == 0, 15,
             what="acks=all again once the followers fetch")
