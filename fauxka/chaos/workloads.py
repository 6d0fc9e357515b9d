"""The built-in workloads, through confluent-kafka (librdkafka), recording into a History:

- ProduceWorkload: idempotent acks=all producers writing unique values (`p0-17`) to every
  partition in turn: send, then ack or fail from the delivery report;
- TxnWorkload (txn_workload.py): consume-transform-produce in transactions, read back with
  read_committed;
- GroupWorkload: consumers of one group on the produce topic committing what they polled, each
  leaving after a few seconds and a new one joining.
Each runs in its own threads until stop(); every wait has a deadline."""

import random
import threading
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition

from .history import History

READ_COMMITTED = "read_committed"


class _Threads:
    def __init__(self, history: History, bootstrap: str):
        self.history = history
        self.bootstrap = bootstrap
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def _spawn(self, target, name: str, *args) -> None:
        thread = threading.Thread(target=self._guard, args=(target, name, *args), name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _guard(self, target, name, *args) -> None:
        try:
            target(*args)
        except Exception as exc:  # a workload thread must not die silently: the history says so
            self.history.record("note", what="workload error", thread=name, error=f"{type(exc).__name__}: {exc}")

    def stop(self, timeout_s: float = 120.0) -> None:
        self._stop.set()
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(max(0.1, deadline - time.monotonic()))


class Producing(_Threads):
    """Idempotent acks=all producing of unique values, with the delivery reports recorded."""

    def _producer(self) -> Producer:
        return Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "acks": "all",
                         "linger.ms": 5, "delivery.timeout.ms": 120000, "log_level": 0})

    def _produce_loop(self, name: str, topic: str, partitions: int, rate: float, workload: str) -> None:
        producer, seq = self._producer(), 0
        interval = 1.0 / rate
        next_at = time.monotonic()
        while not self._stop.is_set():
            value = f"{name}-{seq}"
            partition = seq % partitions
            self.history.record("send", workload=workload, producer=name, seq=seq, value=value, topic=topic,
                                partition=partition)
            while True:
                try:
                    producer.produce(topic, value.encode(), partition=partition, on_delivery=self._report(value))
                    break
                except BufferError:
                    producer.poll(0.1)
                except KafkaException as exc:  # fatal (an idempotent producer's sequence lost): a new one
                    self.history.record("note", what="producer fatal", producer=name, error=str(exc))
                    producer.flush(5)
                    producer = self._producer()
            seq += 1
            producer.poll(0)
            next_at += interval
            self._stop.wait(max(0.0, next_at - time.monotonic()))
        remaining = producer.flush(90)
        if remaining:
            self.history.record("note", what="unflushed", producer=name, count=remaining)

    def _report(self, value: str):
        def report(err, msg):
            if err is not None:
                self.history.record("fail", value=value, error=err.name() if hasattr(err, "name") else str(err))
            else:
                self.history.record("ack", value=value, topic=msg.topic(), partition=msg.partition(),
                                    offset=msg.offset())
        return report


class ProduceWorkload(Producing):
    def __init__(self, history, bootstrap, topic, partitions, producers: int = 2, rate: float = 100.0):
        super().__init__(history, bootstrap)
        self.topic, self.partitions, self.producers, self.rate = topic, partitions, producers, rate

    def start(self) -> "ProduceWorkload":
        for i in range(self.producers):
            self._spawn(self._produce_loop, f"p{i}", f"p{i}", self.topic, self.partitions, self.rate, "produce")
        return self


class GroupWorkload(_Threads):
    def __init__(self, history, bootstrap, topic, group, seed, members: int = 3):
        super().__init__(history, bootstrap)
        self.topic, self.group, self.members = topic, group, members
        self._rng = random.Random(seed)

    def start(self) -> "GroupWorkload":
        for i in range(self.members):
            self._spawn(self._member_loop, f"group-member-{i}", i, random.Random(self._rng.random()))
        return self

    def _member_loop(self, slot: int, rng: random.Random) -> None:
        generation = 0
        while not self._stop.is_set():
            generation += 1
            self._member(f"m{slot}.{generation}", rng.uniform(3, 10))
            self._stop.wait(rng.uniform(0, 2))

    def _member(self, name: str, lifetime_s: float) -> None:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group, "log_level": 0,
                             "enable.auto.commit": False, "auto.offset.reset": "earliest",
                             "session.timeout.ms": 10000, "client.id": name})
        consumer.subscribe([self.topic], on_assign=self._rebalanced(name, "assign"),
                           on_revoke=self._rebalanced(name, "revoke"), on_lost=self._rebalanced(name, "lost"))
        self.history.record("note", what="member joins", member=name, group=self.group)
        leave_at = time.monotonic() + lifetime_s
        try:
            while not self._stop.is_set() and time.monotonic() < leave_at:
                offsets = {}
                for m in consumer.consume(100, 0.5):
                    if m.error() is None:
                        self.history.record("poll", consumer=name, isolation="read_uncommitted", topic=m.topic(),
                                            partition=m.partition(), offset=m.offset(), value=m.value().decode())
                        offsets[m.partition()] = m.offset() + 1
                    else:  # e.g. a log truncation the client detected (it moved its position)
                        self.history.record("note", what="consumer error", member=name, partition=m.partition(),
                                            offset=m.offset(), error=m.error().name(), message=m.error().str())
                if offsets:
                    self._commit(consumer, name, offsets)
        finally:
            consumer.close()
            self.history.record("note", what="member leaves", member=name, group=self.group)

    def _rebalanced(self, name, what):
        def callback(consumer, partitions):
            self.history.record("note", what=what, member=name, group=self.group,
                                generation=_generation(consumer), partitions=sorted(tp.partition for tp in partitions))
        return callback

    def _commit(self, consumer, name, offsets) -> None:
        generation = _generation(consumer)
        try:
            consumer.commit(offsets=[TopicPartition(self.topic, p, o) for p, o in offsets.items()], asynchronous=False)
            self.history.record("commit", group=self.group, member=name, topic=self.topic, generation=generation,
                                offsets={str(p): o for p, o in offsets.items()}, ok=True)
        except KafkaException as exc:
            self.history.record("commit", group=self.group, member=name, topic=self.topic, generation=generation,
                                offsets={str(p): o for p, o in offsets.items()}, ok=False, error=exc.args[0].name())

    def record_committed(self, partitions: int) -> None:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group, "log_level": 0})
        try:
            committed = consumer.committed([TopicPartition(self.topic, p) for p in range(partitions)], 30)
            self.history.record("group_offsets", group=self.group, topic=self.topic,
                                offsets={str(tp.partition): tp.offset for tp in committed if tp.offset >= 0})
        finally:
            consumer.close()


def _generation(consumer) -> int | None:
    """The member's group generation, from librdkafka's serialized group metadata ("CGMDv2:" and
    the generation id as a native int32); None when it cannot be read."""
    try:
        blob = consumer.consumer_group_metadata()
        return int.from_bytes(blob[7:11], "little", signed=True) if blob[:7] == b"CGMDv2:" else None
    except Exception:
        return None


def read_back(history: History, bootstrap: str, topic: str, partitions: int, isolation: str,
              timeout_s: float = 120.0) -> bool:
    """Every record of the topic from the log start, as `read` events, and each partition's `end`;
    whether each partition was read to its end within the deadline."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "fauxka-chaos-readback", "log_level": 0,
                         "isolation.level": isolation, "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        ends = {}
        for p in range(partitions):
            ends[p] = consumer.get_watermark_offsets(TopicPartition(topic, p), 30)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        done: set[int] = {p for p, (low, high) in ends.items() if high <= low}
        deadline = time.monotonic() + timeout_s
        while len(done) < partitions and time.monotonic() < deadline:
            for m in consumer.consume(500, 1.0):
                if m.error() is not None:
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        if m.offset() >= ends[m.partition()][1] or isolation == READ_COMMITTED:
                            done.add(m.partition())
                    continue
                history.record("read", isolation=isolation, topic=topic, partition=m.partition(), offset=m.offset(),
                               value=m.value().decode())
        for p, (low, high) in ends.items():
            history.record("end", isolation=isolation, topic=topic, partition=p, low=low, high=high,
                           complete=p in done)
        return len(done) == partitions
    finally:
        consumer.close()
