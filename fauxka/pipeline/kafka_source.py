"""`fauxka-kafka`: Spark's Kafka connector in the shape of a PySpark 4 Python data source.

    from fauxka.pipeline import kafka_source
    kafka_source.register(spark)
    df = (spark.read.format("fauxka-kafka").option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "events").load())

Same options and schema as spark-sql-kafka-0-10 (KafkaSourceProvider): key, value (binary), topic,
partition, offset, timestamp, timestampType, and headers with includeHeaders=true. One Spark
partition per Kafka partition and offset range; the streaming offsets are Spark's JSON
({"topic": {"0": 42}}) kept in the query's checkpoint, so a restarted query resumes exactly.
The name is not "kafka": Spark resolves a format name to its built-in (JVM) provider first, and
a name that shadows it would break jobs that have the Maven connector on the classpath.
"""

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.types import (ArrayType, BinaryType, IntegerType, LongType, StringType, StructField,
                               StructType, TimestampType)

from . import kafka_client as kc
from . import worker_python
from .kafka_options import SourceOptions, rate_limit, source_options

try:  # Spark 4.2+: Trigger.AvailableNow honours maxOffsetsPerTrigger
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
except ImportError:  # pragma: no cover - Spark 4.0/4.1
    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        pass

FORMAT = "fauxka-kafka"

HEADERS = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def schema(include_headers: bool) -> StructType:
    fields = [StructField("key", BinaryType()), StructField("value", BinaryType()),
              StructField("topic", StringType()), StructField("partition", IntegerType()),
              StructField("offset", LongType()), StructField("timestamp", TimestampType()),
              StructField("timestampType", IntegerType())]
    if include_headers:
        fields.append(StructField("headers", HEADERS))
    return StructType(fields)


class OffsetRange(InputPartition):
    """One Spark partition: [start, end) of one Kafka partition. `new`: a partition that appeared
    during a streaming query, read from its log start (no data loss to report, as Spark does)."""

    def __init__(self, topic: str, partition: int, start: int, end: int, new: bool = False):
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end, self.new = topic, partition, start, end, new


class KafkaDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self):
        from .kafka_options import _bool, _lower

        return schema(_bool(_lower(dict(self.options)), "includeHeaders", False))

    def reader(self, schema):
        return BatchReader(source_options(dict(self.options), streaming=False), schema)

    def streamReader(self, schema):
        return StreamReader(source_options(dict(self.options), streaming=True), schema)

    def writer(self, schema, overwrite):
        from .kafka_sink import BatchWriter

        return BatchWriter(dict(self.options), schema)

    def streamWriter(self, schema, overwrite):
        from .kafka_sink import StreamWriter

        return StreamWriter(dict(self.options), schema)


class _Reading:
    """read() for both readers: the executor side, one offset range."""

    options: SourceOptions

    def read(self, partition: OffsetRange):
        from pyspark.sql.pandas.types import to_arrow_schema

        o = self.options
        start = partition.start
        if partition.end <= start:
            return
        fail = o.fail_on_data_loss and not partition.new
        yield from kc.read_range(o.client, partition.topic, partition.partition, start, partition.end,
                                 fail_on_data_loss=fail, include_headers=o.include_headers,
                                 poll_timeout_ms=o.poll_timeout_ms,
                                 arrow_schema=to_arrow_schema(self.schema, timezone="UTC"))


class BatchReader(_Reading, DataSourceReader):
    def __init__(self, options: SourceOptions, schema):
        self.options, self.schema = options, schema

    def partitions(self):
        o = self.options
        c = kc.consumer(o.client)
        try:
            pairs = kc.topic_partitions(c, o)
            marks = kc.watermarks(c, pairs)
            starts = kc.starting_offsets(c, o, pairs, marks)
            ends = kc.ending_offsets(c, o, pairs, marks)
        finally:
            c.close()
        for tp in pairs:
            if starts[tp] > ends[tp]:
                raise kc.KafkaSourceError(f"{tp[0]}-{tp[1]}: starting offset {starts[tp]} is after the "
                                          f"ending offset {ends[tp]}")
        ranges = [OffsetRange(t, p, starts[(t, p)], ends[(t, p)]) for t, p in pairs if ends[(t, p)] > starts[(t, p)]]
        return ranges or [OffsetRange("", -1, 0, 0)]  # Spark wants at least one partition


def _json(offsets: dict[tuple[str, int], int]) -> dict:
    result: dict = {}
    for (t, p), offset in sorted(offsets.items()):
        result.setdefault(t, {})[str(p)] = offset
    return result


class StreamReader(_Reading, DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: SourceOptions, schema):
        self.options, self.schema = options, schema
        self._consumer = None
        self._target: dict | None = None  # Trigger.AvailableNow: never read past these offsets

    def _client(self):
        if self._consumer is None:
            self._consumer = kc.consumer(self.options.client)
        return self._consumer

    def initialOffset(self) -> dict:
        c = self._client()
        pairs = kc.topic_partitions(c, self.options)
        marks = kc.watermarks(c, pairs)
        return _json(kc.starting_offsets(c, self.options, pairs, marks))

    def latestOffset(self, start=None, limit=None) -> dict:
        """All there is now, or at most maxOffsetsPerTrigger records more than `start` (Spark 4.2+
        passes start and the read limit; Spark 4.0/4.1 call it without them)."""
        latest = self._target or self._latest()
        max_rows = getattr(limit, "max_rows", None)
        if start is not None and max_rows is not None:
            return rate_limit(start, latest, max_rows)
        return latest

    def _latest(self) -> dict:
        c = self._client()
        pairs = kc.topic_partitions(c, self.options)
        return _json({tp: high for tp, (_, high) in kc.watermarks(c, pairs).items()})

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._latest()

    def getDefaultReadLimit(self):
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

        n = self.options.max_offsets_per_trigger
        return ReadMaxRows(n) if n else ReadAllAvailable()

    def partitions(self, start: dict, end: dict):
        ranges = []
        for topic, ends in sorted(end.items()):
            for p, stop in sorted(ends.items(), key=lambda kv: int(kv[0])):
                begin = start.get(topic, {}).get(p)
                new = begin is None
                begin = 0 if new else begin
                if stop > begin:
                    ranges.append(OffsetRange(topic, int(p), begin, stop, new))
        return ranges

    def commit(self, end: dict) -> None:
        """Nothing to tell Kafka: the checkpoint holds the offsets."""

    def stop(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


def register(spark) -> None:
    """Make `spark.read.format("fauxka-kafka")` (and readStream, write, writeStream) available; first
    check that the Python Spark starts its workers with can import this source (worker_python.py)."""
    try:
        python = spark.sparkContext.pythonExec
    except Exception:  # Spark Connect: no SparkContext here, the server's workers are its own business
        python = None
    worker_python.check(python)
    spark.dataSource.register(KafkaDataSource)
