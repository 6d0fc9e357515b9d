"""A consume-transform-produce loop (confluent-kafka) whose transaction coordinator is SIGKILLed
between send_offsets_to_transaction and commit_transaction (issue 22, item 8). The app recovers as
a real one does: a retriable error retries the call, an abortable one aborts and rewinds the
consumer to the group's committed offsets, a fatal one (or a call that gave up) rebuilds the
producer with the same transactional.id and the consumer. Downstream, read_committed sees every
input exactly once; every client call returns within its own timeout (a watchdog fails the test if
one hangs, as send_offsets_to_transaction once did for more than 10 minutes)."""

import signal
import threading
import time

import pytest

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.harness import wait_for

pytestmark = pytest.mark.disruptive

PARTITIONS = 3
RECORDS = 24
BATCH = 4
OVERRIDES = {"transaction.state.log.num.partitions": "3", "offsets.topic.num.partitions": "3"}
CALL_LIMIT_S = 120  # no client call given a 30 s timeout may take this long
# librdkafka's coordinator cache keeps an entry this long after its last use (rd_kafka_coord_cache_init).
# A group coordinator that died and left the Metadata answers (the client decommissions it) stays
# cached otherwise, and the next transaction's TxnOffsetCommit waits for it forever: librdkafka
# issues 5511 and 5456 (a coordinator request's timeout is never checked), on Kafka as here. Below the
# cluster's zookeeper.session.timeout.ms (the harness's 2 s: a dead broker leaves the metadata only
# after it), the stale entry is gone before the next transaction asks for the group's coordinator.
PRODUCER_METADATA_MAX_AGE_MS = 1000


class Hung(AssertionError):
    pass


def transaction_coordinator(cluster, tid: str, dead: set[int] = frozenset()) -> int:
    address = cluster.address_of(min(b for b in cluster.brokers if b not in dead))

    def found():
        r = send(address, 10, 3, {"key": tid, "key_type": 1})
        return int(r.node_id) if int(r.error_code) == 0 and int(r.node_id) not in dead else None
    return wait_for(found, 60, 0.2, "the transaction coordinator")


class Loop:
    """The app: reads `source` in group `group`, writes each record upper-cased to `sink` in
    transactions of up to BATCH records, with transactional.id `tid`. `between(n)` runs after
    send_offsets_to_transaction of the n-th transaction, before its commit_transaction."""

    def __init__(self, bootstrap: str, source: str, sink: str, group: str, tid: str, between=None, logger=None,
                 debug: str | None = None):
        self.bootstrap, self.source, self.sink, self.group, self.tid = bootstrap, source, sink, group, tid
        self.between = between or (lambda n: None)
        self.logger, self.debug = logger, debug
        self.events: list[str] = []  # what the app went through (errors, rebuilds), for the report
        self.calls: dict[str, float] = {}  # the call under way -> when it began (the watchdog reads it)
        self.transactions = 0
        self.producer = self.consumer = None

    def _conf(self, **more) -> dict:
        conf = {"bootstrap.servers": self.bootstrap, **more}
        if self.debug:
            conf["debug"] = self.debug
        if self.logger is not None:
            conf["logger"] = self.logger
        return conf

    def _call(self, name: str, fn, *args):
        self.calls[name] = time.monotonic()
        try:
            return fn(*args)
        finally:
            del self.calls[name]

    def _build(self) -> None:
        from confluent_kafka import Consumer, Producer
        if self.producer is not None:
            self.producer.flush(0)
        if self.consumer is not None:
            self.consumer.close()
        self.producer = Producer(self._conf(**{"transactional.id": self.tid, "acks": "all",
                                               "metadata.max.age.ms": PRODUCER_METADATA_MAX_AGE_MS}))
        while True:
            try:
                self._call("init_transactions", self.producer.init_transactions, 30)
                break
            except Exception as exc:  # a retriable error (the coordinator moving): init again
                if not _retriable(exc):
                    raise
                self.events.append(f"init_transactions: {_name(exc)}")
        self.consumer = Consumer(self._conf(**{
            "group.id": self.group, "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "isolation.level": "read_committed"}))
        self.consumer.subscribe([self.source])

    def _rewind(self) -> None:
        """Back to the group's committed offsets (what an aborted transaction did not move)."""
        from confluent_kafka import TopicPartition
        assigned = self.consumer.assignment()
        if not assigned:
            return
        for tp in self._call("committed", self.consumer.committed, assigned, 30):
            self.consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))

    def run(self, total: int, deadline_s: float = 600) -> None:
        from confluent_kafka import KafkaException
        self._build()
        done = 0
        deadline = time.monotonic() + deadline_s
        while done < total:
            assert time.monotonic() < deadline, f"only {done} of {total} inputs done: {self.events}"
            batch = [m for m in self._call("consume", self.consumer.consume, BATCH, 1.0) if m.error() is None]
            if not batch:
                continue
            try:
                self._call("begin_transaction", self.producer.begin_transaction)
                for m in batch:
                    self.producer.produce(self.sink, m.value().upper(), key=m.value(), partition=m.partition())
                self._call("send_offsets_to_transaction", self.producer.send_offsets_to_transaction,
                           self.consumer.position(self.consumer.assignment()),
                           self.consumer.consumer_group_metadata(), 30)
                self.transactions += 1
                self.between(self.transactions)
                self._commit()
                done += len(batch)
            except KafkaException as exc:
                error = exc.args[0]
                self.events.append(f"{_name(exc)} fatal={error.fatal()} abortable={error.txn_requires_abort()}")
                if error.txn_requires_abort():
                    try:
                        self._call("abort_transaction", self.producer.abort_transaction, 30)
                        self._rewind()
                        continue
                    except KafkaException as again:
                        self.events.append(f"abort_transaction: {_name(again)}")
                self._build()  # fatal, or a call that gave up: a new producer fences the old one

    def _commit(self) -> None:
        from confluent_kafka import KafkaException
        while True:
            try:
                return self._call("commit_transaction", self.producer.commit_transaction, 30)
            except KafkaException as exc:
                if not exc.args[0].retriable():
                    raise
                self.events.append(f"commit_transaction: {_name(exc)} (retried)")

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
        if self.producer is not None:
            self.producer.flush(0)


def _name(exc) -> str:
    error = exc.args[0] if exc.args else None
    return error.name() if hasattr(error, "name") else repr(exc)


def _retriable(exc) -> bool:
    error = exc.args[0] if exc.args else None
    return hasattr(error, "retriable") and error.retriable()


def run_watched(loop: Loop, total: int) -> None:
    """loop.run(total) in a thread; Hung when one of its calls outlives CALL_LIMIT_S."""
    failure: list[BaseException] = []

    def body():
        try:
            loop.run(total)
        except BaseException as exc:  # handed to the test
            failure.append(exc)
    thread = threading.Thread(target=body, daemon=True, name="ctp-loop")
    thread.start()
    while thread.is_alive():
        thread.join(1)
        for name, began in list(loop.calls.items()):
            if time.monotonic() - began > CALL_LIMIT_S:
                raise Hung(f"{name} has not returned for {CALL_LIMIT_S} s; the app went through {loop.events}")
    if failure:
        raise failure[0]


def read_committed(bootstrap: str, topic: str, expect: int, timeout_s: float = 90) -> list[tuple[bytes, bytes]]:
    """Every committed record of the topic, read once (assigned, never rebalanced)."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("check"), "enable.auto.commit": False,
                  "isolation.level": "read_committed"})
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    got: list[tuple[bytes, bytes]] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and len(got) < expect:
        msg = c.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append((msg.key(), msg.value()))
    end = time.monotonic() + 2  # nothing more may come (no duplicate)
    while time.monotonic() < end:
        msg = c.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append((msg.key(), msg.value()))
    c.close()
    return got


def prepare(cluster) -> tuple[str, str, list[bytes]]:
    from confluent_kafka import Producer
    source, sink = unique("ctp-in"), unique("ctp-out")
    results = create_topics(cluster.controller_address(), [topic_spec(source, PARTITIONS, 3),
                                                            topic_spec(sink, PARTITIONS, 3)])
    assert [int(r.error_code) for r in results] == [0, 0]
    inputs = [f"in-{i}".encode() for i in range(RECORDS)]
    plain = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True})  # its retries add no copy
    for i, value in enumerate(inputs):
        plain.produce(source, value, partition=i % PARTITIONS)
    assert plain.flush(30) == 0
    return source, sink, inputs


def check_exactly_once(bootstrap: str, sink: str, inputs: list[bytes]) -> None:
    got = read_committed(bootstrap, sink, len(inputs))
    assert sorted(got) == sorted((v, v.upper()) for v in inputs)


def test_coordinator_killed_between_send_offsets_and_commit_exactly_once(make_cluster):
    cluster = make_cluster(3, OVERRIDES)
    source, sink, inputs = prepare(cluster)
    tid, killed = unique("ctp-tid"), []

    def between(n: int) -> None:
        if n == 2:  # the second transaction: offsets sent, commit not yet asked for
            victim = transaction_coordinator(cluster, tid)
            cluster.brokers[victim].signal(signal.SIGKILL)
            killed.append(victim)

    loop = Loop(cluster.bootstrap, source, sink, unique("ctp-g"), tid, between)
    try:
        run_watched(loop, len(inputs))
    finally:
        loop.close()
    assert killed
    check_exactly_once(cluster.bootstrap, sink, inputs)
