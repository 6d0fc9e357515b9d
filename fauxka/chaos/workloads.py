"""The built-in workloads, through confluent-kafka (librdkafka), recording into a History:

- ProduceWorkload: idempotent acks=all producers writing unique values (`p0-17`) to every
  partition in turn: send, then ack or fail from the delivery report;
- TxnWorkload: a feeder writes `i-5` to the input topic; a transactional processor consumes
  (read_committed), writes `i-5|t0-3` to the output topic and commits its offsets in the
  transaction (consume-transform-produce), aborting one transaction in five on purpose; a
  read_committed reader polls the output;
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


class _Producing(_Threads):
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


class ProduceWorkload(_Producing):
    def __init__(self, history, bootstrap, topic, partitions, producers: int = 2, rate: float = 100.0):
        super().__init__(history, bootstrap)
        self.topic, self.partitions, self.producers, self.rate = topic, partitions, producers, rate

    def start(self) -> "ProduceWorkload":
        for i in range(self.producers):
            self._spawn(self._produce_loop, f"p{i}", f"p{i}", self.topic, self.partitions, self.rate, "produce")
        return self


class TxnWorkload(_Producing):
    def __init__(self, history, bootstrap, in_topic, out_topic, partitions, group, transactional_id, seed,
                 rate: float = 50.0):
        super().__init__(history, bootstrap)
        self.in_topic, self.out_topic, self.partitions = in_topic, out_topic, partitions
        self.group, self.transactional_id, self.rate = group, transactional_id, rate
        self._rng = random.Random(seed)
        self._feeding = threading.Event()
        self._processed_to: dict[int, int] = {}
        self._drain_lock = threading.Lock()

    def start(self) -> "TxnWorkload":
        self._feeding.set()
        self._spawn(self._feed, "txn-feeder")
        self._spawn(self._process, "txn-processor")
        self._spawn(self._read, "txn-reader")
        return self

    def _feed(self) -> None:
        interval, next_at, seq = 1.0 / self.rate, time.monotonic(), 0
        producer = self._producer()
        while self._feeding.is_set() and not self._stop.is_set():
            value = f"i-{seq}"
            self.history.record("send", workload="txn-in", producer="i", seq=seq, value=value, topic=self.in_topic,
                                partition=seq % self.partitions)
            try:
                producer.produce(self.in_topic, value.encode(), partition=seq % self.partitions,
                                 on_delivery=self._report(value))
            except BufferError:
                producer.poll(0.5)
                continue
            seq += 1
            producer.poll(0)
            next_at += interval
            self._stop.wait(max(0.0, next_at - time.monotonic()))
        producer.flush(90)

    def drain(self, timeout_s: float = 90.0) -> bool:
        """Stop feeding, then wait until the processor has committed everything fed; whether it did."""
        self._feeding.clear()
        for thread in self._threads:
            if thread.name == "txn-feeder":
                thread.join(timeout_s)
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"{self.group}-probe", "log_level": 0})
        try:
            highs = {p: consumer.get_watermark_offsets(TopicPartition(self.in_topic, p), 10)[1]
                     for p in range(self.partitions)}
        finally:
            consumer.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._drain_lock:
                if all(self._processed_to.get(p, 0) >= high for p, high in highs.items()):
                    self.history.record("note", what="drained", ok=True, input_topic=self.in_topic, highs=highs)
                    return True
            time.sleep(0.5)
        self.history.record("note", what="drained", ok=False, input_topic=self.in_topic, highs=highs,
                            processed=dict(self._processed_to))
        return False

    # --- consume-transform-produce ---------------------------------------------------

    def _txn_producer(self) -> Producer:
        # metadata.max.age.ms also bounds librdkafka's coordinator cache (rd_kafka_coord_cache_init):
        # a group coordinator that died and left the Metadata answers stays cached otherwise, and the
        # next send_offsets_to_transaction waits for it without sending anything, past its timeout
        # (librdkafka issues 5511 and 5456, on Kafka as here). Below `fauxka up`'s and the fixtures'
        # zookeeper.session.timeout.ms (6 s), the entry is gone before the next transaction asks.
        producer = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": self.transactional_id,
                             "transaction.timeout.ms": 30000, "linger.ms": 5, "log_level": 0,
                             "metadata.max.age.ms": 3000})
        deadline = time.monotonic() + 120
        while True:
            try:
                producer.init_transactions(30)
                return producer
            except KafkaException as exc:
                if time.monotonic() > deadline or self._stop.is_set():
                    raise
                self.history.record("note", what="init_transactions", error=str(exc.args[0]))
                time.sleep(1)

    def _consumer(self) -> Consumer:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group, "log_level": 0,
                             "isolation.level": READ_COMMITTED, "enable.auto.commit": False,
                             "auto.offset.reset": "earliest", "session.timeout.ms": 10000})
        consumer.subscribe([self.in_topic])
        return consumer

    def _process(self) -> None:
        consumer = self._consumer()
        producer = self._txn_producer()
        number = 0
        try:
            while not self._stop.is_set():
                batch = [m for m in consumer.consume(100, 0.5) if m.error() is None]
                if not batch:
                    continue
                number += 1
                txn = f"{self.transactional_id}-{number}"
                ok, producer = self._transaction(producer, consumer, txn, batch)
                if ok:
                    with self._drain_lock:
                        for m in batch:
                            self._processed_to[m.partition()] = max(self._processed_to.get(m.partition(), 0),
                                                                    m.offset() + 1)
                elif not self._rewind(consumer):
                    # a consumer that cannot learn where to go back to must not go on from where it
                    # is (the aborted batch's inputs would be skipped): a new one starts from the
                    # group's committed offsets
                    consumer.close()
                    consumer = self._consumer()
        finally:
            consumer.close()

    def _transaction(self, producer, consumer, txn, batch) -> tuple[bool, Producer]:
        """One transaction over the batch; (committed, the producer to go on with)."""
        values = [f"{m.value().decode()}|{txn}" for m in batch]
        abort = self._rng.random() < 0.2
        phase = "begin"
        try:
            producer.begin_transaction()
            self.history.record("txn", phase="begin", txn=txn, values=values, inputs=[m.value().decode() for m in batch])
            for m, value in zip(batch, values):
                producer.produce(self.out_topic, value.encode(), partition=m.partition())
            if abort:
                phase = "abort"
                self.history.record("note", what="txn call", call="abort_transaction", txn=txn)
                producer.abort_transaction(30)
                self.history.record("txn", phase="abort", txn=txn, ok=True, deliberate=True)
                return False, producer
            offsets = {}
            for m in batch:
                offsets[m.partition()] = max(offsets.get(m.partition(), 0), m.offset() + 1)
            self.history.record("note", what="txn call", call="send_offsets_to_transaction", txn=txn)
            producer.send_offsets_to_transaction([TopicPartition(self.in_topic, p, o) for p, o in offsets.items()],
                                                 consumer.consumer_group_metadata(), 30)
            phase = "commit"
            self.history.record("note", what="txn call", call="commit_transaction", txn=txn)
            producer.commit_transaction(30)
            self.history.record("txn", phase="commit", txn=txn, ok=True)
            return True, producer
        except KafkaException as exc:
            error: KafkaError = exc.args[0]
            if phase == "commit":
                self.history.record("txn", phase="commit", txn=txn, ok=False, error=error.name())
            if error.txn_requires_abort():
                try:
                    producer.abort_transaction(30)
                    if phase != "abort":
                        self.history.record("txn", phase="abort", txn=txn, ok=True, after=error.name())
                    return False, producer
                except KafkaException as again:
                    self.history.record("txn", phase="abort", txn=txn, ok=False, error=again.args[0].name())
            elif phase == "abort":
                self.history.record("txn", phase="abort", txn=txn, ok=False, error=error.name())
            elif phase == "begin":
                self.history.record("txn", phase="abort", txn=txn, ok=False, error=error.name(), before_commit=True)
            # fatal, or the abort failed: a new producer with the same transactional.id fences this one
            # and aborts whatever it left open
            self.history.record("note", what="txn producer replaced", txn=txn, error=error.name())
            try:
                producer.flush(1)
            except Exception:
                pass
            return False, self._txn_producer()

    def _rewind(self, consumer) -> bool:
        """Back to the group's committed offsets (what the last committed transaction consumed);
        False when they cannot be had (the coordinator moving, ...) for 30 s."""
        assignment = consumer.assignment()
        if not assignment:
            return True
        deadline = time.monotonic() + 30
        while True:
            try:
                committed = consumer.committed(assignment, 10)
                break
            except KafkaException as exc:
                if time.monotonic() > deadline or self._stop.is_set():
                    self.history.record("note", what="rewind failed", error=str(exc.args[0]))
                    return False
                time.sleep(0.5)
        try:
            for tp in committed:
                consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))
        except KafkaException as exc:  # a partition revoked meanwhile
            self.history.record("note", what="rewind failed", error=str(exc.args[0]))
            return False
        return True

    def _read(self) -> None:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"{self.group}-reader", "log_level": 0,
                             "isolation.level": READ_COMMITTED, "enable.auto.commit": False})
        consumer.assign([TopicPartition(self.out_topic, p, OFFSET_BEGINNING) for p in range(self.partitions)])
        try:
            while not self._stop.is_set():
                for m in consumer.consume(200, 0.5):
                    if m.error() is None:
                        self.history.record("poll", consumer="txn-reader", isolation=READ_COMMITTED, topic=m.topic(),
                                            partition=m.partition(), offset=m.offset(), value=m.value().decode(),
                                            static=True)
        finally:
            consumer.close()


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
