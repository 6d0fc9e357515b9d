"""TxnWorkload, a built-in workload (see workloads.py): a feeder writes `i-5` to the input topic; a
transactional processor consumes (read_committed), writes `i-5|t0-3` to the output topic and
commits its offsets in the transaction (consume-transform-produce), aborting one transaction in
five on purpose; a read_committed reader polls the output. Each runs in its own thread until
stop(); every wait has a deadline."""

import random
import threading
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition

from .workloads import READ_COMMITTED, Producing


class TxnWorkload(Producing):
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
