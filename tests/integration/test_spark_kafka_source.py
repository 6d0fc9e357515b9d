"""The fauxka-kafka PySpark data source (fauxka/pipeline/kafka_source.py) against the shared cluster and
one local Spark: exact contents from batch and streaming reads, startingOffsets variants, a
streaming query stopped and restarted from its checkpoint, the sink, and bad input."""

import time

import pytest

from tests.admin_helpers import KEEP_OLD_RECORDS, create_topics, topic_spec, unique
from tests.spark_support import spark  # noqa: F401  (the fixture)

BASE_TS = 1_700_000_000_000
PER_PARTITION = 30


@pytest.fixture(scope="module")
def source(spark):  # noqa: F811
    from fauxka.pipeline import kafka_source

    kafka_source.register(spark)
    return kafka_source.FORMAT


def _topic(cluster, partitions: int) -> str:
    name = unique("spark")
    spec = topic_spec(name, partitions, 3, configs=KEEP_OLD_RECORDS)  # BASE_TS is 2023
    [result] = create_topics(cluster.controller_address(), [spec])
    assert int(result.error_code) == 0, result
    return name


def _produce(cluster, topic: str, partitions: int, count: int, first: int = 0) -> list[tuple]:
    """`count` records per partition: (partition, key, value, headers, timestamp) in offset order."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 5})
    sent = []
    for p in range(partitions):
        for i in range(first, first + count):
            record = (p, f"k{p}-{i}".encode(), f"v{p}-{i}".encode(), [("n", str(i).encode())], BASE_TS + i)
            producer.produce(topic, record[2], record[1], partition=p, headers=record[3], timestamp=record[4])
            sent.append(record)
    assert producer.flush(30) == 0
    return sent


@pytest.fixture(scope="module")
def filled(cluster):
    topic = _topic(cluster, 3)
    return topic, _produce(cluster, topic, 3, PER_PARTITION)


def _reader(spark, source, cluster, topic, **options):  # noqa: F811
    r = spark.read.format(source).option("kafka.bootstrap.servers", cluster.bootstrap).option("subscribe", topic)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def test_batch_read_has_every_record_with_keys_headers_and_timestamps(spark, source, cluster, filled):  # noqa: F811
    topic, sent = filled
    df = _reader(spark, source, cluster, topic, includeHeaders="true")
    assert df.columns == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    assert df.rdd.getNumPartitions() == 3  # one Spark partition per Kafka partition
    rows = sorted(df.collect(), key=lambda r: (r.partition, r.offset))
    assert len(rows) == 3 * PER_PARTITION
    got = [(r.partition, bytes(r.key), bytes(r.value), [(h.key, bytes(h.value)) for h in r.headers],
            int(r.timestamp.timestamp() * 1000)) for r in rows]
    assert got == sent
    assert {r.topic for r in rows} == {topic} and {r.timestampType for r in rows} == {0}
    assert [r.offset for r in rows if r.partition == 1] == list(range(PER_PARTITION))


def test_starting_and_ending_offsets_variants(spark, source, cluster, filled):  # noqa: F811
    topic, _ = filled
    json_range = _reader(spark, source, cluster, topic,
                         startingOffsets=f'{{"{topic}":{{"0":5,"1":-2,"2":-1}}}}',
                         endingOffsets=f'{{"{topic}":{{"0":10,"1":3,"2":-1}}}}')
    assert sorted((r.partition, r.offset) for r in json_range.collect()) == (
        [(0, o) for o in range(5, 10)] + [(1, o) for o in range(3)])
    by_time = _reader(spark, source, cluster, topic,
                      startingOffsetsByTimestamp=f'{{"{topic}":{{"0":{BASE_TS + 25},"1":{BASE_TS + 29},'
                                                 f'"2":{BASE_TS + 99}}}}}')
    assert sorted((r.partition, r.offset) for r in by_time.collect()) == [(0, o) for o in range(25, 30)] + [(1, 29)]
    assigned = (spark.read.format(source).option("kafka.bootstrap.servers", cluster.bootstrap)
                .option("assign", f'{{"{topic}":[2]}}').load())
    assert assigned.count() == PER_PARTITION and {r.partition for r in assigned.collect()} == {2}


def test_ending_offsets_by_timestamp_batch(spark, source, cluster, filled):  # noqa: F811
    """The end of each range is the first offset at or after the timestamp (exclusive), the latest
    when no record is that late; endingTimestamp applies one timestamp to every partition."""
    topic, _ = filled
    by_partition = _reader(spark, source, cluster, topic,
                           endingOffsetsByTimestamp=f'{{"{topic}":{{"0":{BASE_TS + 3},"1":{BASE_TS + 99},'
                                                    f'"2":{BASE_TS}}}}}')
    assert sorted((r.partition, r.offset) for r in by_partition.collect()) == (
        [(0, o) for o in range(3)] + [(1, o) for o in range(PER_PARTITION)])
    everywhere = _reader(spark, source, cluster, topic, endingTimestamp=str(BASE_TS + 2))
    assert sorted((r.partition, r.offset) for r in everywhere.collect()) == [(p, o) for p in range(3) for o in (0, 1)]
    window = {p: BASE_TS + 10 + p for p in range(3)}
    between = _reader(spark, source, cluster, topic,
                      startingOffsetsByTimestamp=f'{{"{topic}":{{"0":{window[0]},"1":{window[1]},"2":{window[2]}}}}}',
                      endingOffsetsByTimestamp=f'{{"{topic}":{{"0":{BASE_TS + 12},"1":{BASE_TS + 12},'
                                               f'"2":{BASE_TS + 12}}}}}')
    assert sorted((r.partition, r.offset) for r in between.collect()) == [(0, 10), (0, 11), (1, 11)]
    with pytest.raises(Exception, match="names no timestamp for"):
        _reader(spark, source, cluster, topic, endingOffsetsByTimestamp=f'{{"{topic}":{{"0":{BASE_TS}}}}}').collect()


def test_streaming_query_restarted_from_its_checkpoint_reads_every_record_once(spark, source, cluster,  # noqa: F811
                                                                               tmp_path):
    topic = _topic(cluster, 2)
    sent = _produce(cluster, topic, 2, 20)
    checkpoint, out = str(tmp_path / "checkpoint"), str(tmp_path / "out")

    def run_once():
        stream = (spark.readStream.format(source).option("kafka.bootstrap.servers", cluster.bootstrap)
                  .option("subscribe", topic).option("startingOffsets", "earliest").option("includeHeaders", "true")
                  .option("maxOffsetsPerTrigger", "15").load())
        query = (stream.selectExpr("partition", "key", "value", "headers", "unix_millis(timestamp) ts", "offset")
                 .writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
                 .trigger(availableNow=True).start())
        assert query.awaitTermination(120)
        return query

    first = run_once()
    assert sum(p["numInputRows"] for p in first.recentProgress) == 40
    assert all(p["numInputRows"] <= 15 for p in first.recentProgress)
    sent += _produce(cluster, topic, 2, 10, first=20)
    run_once()
    rows = sorted(spark.read.parquet(out).collect(), key=lambda r: (r.partition, r.offset))
    assert [(r.partition, r.offset) for r in rows] == [(p, o) for p in range(2) for o in range(30)]  # each once
    assert [(r.partition, bytes(r.key), bytes(r.value), [(h.key, bytes(h.value)) for h in r.headers], r.ts)
            for r in rows] == sorted(sent, key=lambda s: (s[0], s[4]))


def test_sink_writes_topic_key_value_and_the_source_reads_them_back(spark, source, cluster):  # noqa: F811
    topic = _topic(cluster, 2)
    df = spark.createDataFrame([(f"k{i}", f"value {i}", i % 2) for i in range(50)], "key string, value string, partition int")
    df.write.format(source).mode("append").option("kafka.bootstrap.servers", cluster.bootstrap).option("topic", topic).save()
    rows = _reader(spark, source, cluster, topic).collect()
    assert sorted((bytes(r.key).decode(), bytes(r.value).decode(), r.partition) for r in rows) == sorted(
        (f"k{i}", f"value {i}", i % 2) for i in range(50))


def test_bad_input_is_a_clear_error_never_a_hang(spark, source, cluster, filled):  # noqa: F811
    topic, _ = filled
    cases = [({"subscribe": topic, "startingOffsetz": "earliest"}, "Unknown option 'startingoffsetz'"),
             ({"subscribe": topic, "startingOffsets": "{nope"}, "startingOffsets"),
             ({"subscribe": unique("missing")}, "not found"),
             ({"subscribe": topic, "kafka.bootstrap.servers": "127.0.0.1:1"}, "127.0.0.1:1")]
    for options, expected in cases:
        started = time.monotonic()
        reader = spark.read.format(source).option("kafka.bootstrap.servers", cluster.bootstrap)
        for k, v in options.items():
            reader = reader.option(k, v)
        with pytest.raises(Exception, match=expected):
            reader.load().collect()
        assert time.monotonic() - started < 40, options


def test_fail_on_data_loss_when_records_were_deleted(spark, source, cluster):  # noqa: F811
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    topic = _topic(cluster, 1)
    _produce(cluster, topic, 1, 10)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})  # DeleteRecords as a user sends it
    [deleted] = admin.delete_records([TopicPartition(topic, 0, 4)], request_timeout=60, operation_timeout=30).values()
    assert deleted.result(90).low_watermark == 4  # every replica's log start moved
    earliest = _reader(spark, source, cluster, topic)
    assert [r.offset for r in earliest.collect()] == list(range(4, 10))
    from_deleted = f'{{"{topic}":{{"0":1}}}}'
    with pytest.raises(Exception, match="were deleted"):
        _reader(spark, source, cluster, topic, startingOffsets=from_deleted).collect()
    skipping = _reader(spark, source, cluster, topic, startingOffsets=from_deleted, failOnDataLoss="false")
    assert [r.offset for r in skipping.collect()] == list(range(4, 10))


def _stable(cluster, topic: str, partitions: int) -> bool:
    """Every transaction's marker written: read_committed's end (the last stable offset) is the
    high watermark on each partition."""
    from confluent_kafka import Consumer, TopicPartition

    ends = {}
    for isolation in ("read_committed", "read_uncommitted"):
        c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g"), "isolation.level": isolation})
        try:
            ends[isolation] = [c.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1]
                               for p in range(partitions)]
        finally:
            c.close()
    return ends["read_committed"] == ends["read_uncommitted"]


def test_read_committed_hides_aborted_records_and_read_uncommitted_shows_them(spark, source, cluster):  # noqa: F811
    from confluent_kafka import Producer

    from tests.harness import wait_for

    topic = _topic(cluster, 2)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": unique("tid")})
    producer.init_transactions(60)
    sent = {"committed": [], "aborted": []}
    for outcome, count in (("committed", 6), ("aborted", 4), ("committed", 2)):
        producer.begin_transaction()
        for i in range(count):
            value = f"{outcome}-{len(sent[outcome])}".encode()
            producer.produce(topic, value, f"k{i}".encode(), partition=i % 2)
            sent[outcome].append(value)
        if outcome == "committed":
            producer.commit_transaction(30)
        else:
            assert producer.flush(30) == 0  # on the partitions before the abort
            producer.abort_transaction(30)
    wait_for(lambda: _stable(cluster, topic, 2), 30, 0.2, "the last transaction's markers written")

    committed = _reader(spark, source, cluster, topic, **{"kafka.isolation.level": "read_committed"}).collect()
    assert sorted(bytes(r.value) for r in committed) == sorted(sent["committed"])
    everything = _reader(spark, source, cluster, topic, **{"kafka.isolation.level": "read_uncommitted"}).collect()
    assert sorted(bytes(r.value) for r in everything) == sorted(sent["committed"] + sent["aborted"])
    # offsets: the aborted records and every transaction's marker take offsets read_committed skips
    assert {(r.partition, r.offset) for r in committed} < {(r.partition, r.offset) for r in everything}


def test_double_underscore_topic_read_by_name_pattern_leaves_out_internal(spark, source, cluster):  # noqa: F811
    """Spark's connector reads a topic subscribed by name as given; a pattern leaves out only the
    topics the broker's Metadata marks internal (__consumer_offsets here), never other `__` names."""
    from confluent_kafka import Consumer, TopicPartition

    name = "__" + unique("spark")
    [result] = create_topics(cluster.controller_address(), [topic_spec(name, 2, 3)])
    assert int(result.error_code) == 0, result
    sent = _produce(cluster, name, 2, 5)
    probe = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": unique("g")})
    try:  # a group's offsets looked up: __consumer_offsets exists, for the pattern to leave out
        probe.committed([TopicPartition(name, 0)], timeout=30)
    finally:
        probe.close()
    expected = sorted((p, k.decode()) for p, k, *_ in sent)
    rows = _reader(spark, source, cluster, name, startingOffsets="earliest").collect()
    assert sorted((r.partition, bytes(r.key).decode()) for r in rows) == expected
    rows = (spark.read.format(source).option("kafka.bootstrap.servers", cluster.bootstrap)
            .option("subscribePattern", "__.*").option("startingOffsets", "earliest").load()
            .select("topic").distinct().collect())
    topics = {r.topic for r in rows}
    assert name in topics and "__consumer_offsets" not in topics
