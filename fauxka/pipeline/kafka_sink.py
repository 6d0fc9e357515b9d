"""The `fauxka-kafka` sink: `df.write.format("fauxka-kafka")` and `writeStream`, as Spark's
Kafka connector writes (KafkaWriter): a `value` column (string or binary) is required; `key`,
`topic` (else the `topic` option), `partition` and `headers` are optional. Each Spark task
produces its rows with confluent-kafka and waits until every one is acknowledged (acks=all by
default), so a task that returns has written everything (at least once, as Spark's sink).
"""

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage

from .kafka_options import SINK_OPTIONS, OptionError, client_conf

FLUSH_TIMEOUT_S = 60.0


def _check(options: dict, schema) -> tuple[dict, str | None]:
    for key in options:
        if not key.lower().startswith("kafka.") and key.lower() not in SINK_OPTIONS:
            raise OptionError(f"Unknown option '{key}' for the fauxka-kafka sink (known: kafka.*, topic)")
    names = set(schema.names)
    if "value" not in names:
        raise OptionError("Required attribute 'value' not found")
    topic = {k.lower(): v for k, v in options.items()}.get("topic")
    if topic is None and "topic" not in names:
        raise OptionError("topic option required when no 'topic' attribute is present")
    return client_conf(options), topic


def _bytes(value):
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, bytearray):
        return bytes(value)
    return str(value).encode()


def produce_rows(client: dict, topic: str | None, rows) -> int:
    from confluent_kafka import KafkaException, Producer

    producer = Producer({"acks": "all", "linger.ms": 5, **client})
    failures: list[str] = []

    def delivered(err, msg):
        if err is not None:
            failures.append(f"{msg.topic()}: {err.str()}")

    count = 0
    for row in rows:
        d = row.asDict() if hasattr(row, "asDict") else dict(row)
        name = topic or d.get("topic")
        if name is None:
            raise OptionError("a row has a null topic and no topic option is set")
        extra = {}
        if d.get("partition") is not None:
            extra["partition"] = d["partition"]
        if d.get("headers"):
            extra["headers"] = [(h["key"], _bytes(h["value"])) for h in d["headers"]]
        while True:
            try:
                producer.produce(name, value=_bytes(d["value"]), key=_bytes(d.get("key")),
                                 on_delivery=delivered, **extra)
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                producer.poll(0.1)
            except KafkaException as exc:
                raise RuntimeError(f"fauxka-kafka sink: {exc.args[0]}") from None
        producer.poll(0)
        count += 1
    left = producer.flush(FLUSH_TIMEOUT_S)
    if left:
        raise RuntimeError(f"fauxka-kafka sink: {left} record(s) not acknowledged within {FLUSH_TIMEOUT_S:.0f}s "
                           f"by {client['bootstrap.servers']}")
    if failures:
        raise RuntimeError(f"fauxka-kafka sink: {len(failures)} record(s) failed, first: {failures[0]}")
    return count


class Written(WriterCommitMessage):
    def __init__(self, count: int):
        self.count = count


class BatchWriter(DataSourceWriter):
    def __init__(self, options: dict, schema):
        self.client, self.topic = _check(options, schema)

    def write(self, iterator):
        return Written(produce_rows(self.client, self.topic, iterator))


class StreamWriter(DataSourceStreamWriter):
    def __init__(self, options: dict, schema):
        self.client, self.topic = _check(options, schema)

    def write(self, iterator):
        return Written(produce_rows(self.client, self.topic, iterator))

    def commit(self, messages, batchId) -> None:
        """Each task already waited for its acknowledgements."""

    def abort(self, messages, batchId) -> None:
        """Records already acknowledged stay written (at least once, as Spark's Kafka sink)."""
