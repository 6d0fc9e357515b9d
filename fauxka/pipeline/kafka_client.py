"""The Kafka side of the `fauxka-kafka` data source, through confluent-kafka (librdkafka):
partition discovery and offset look-ups on the driver, and reading one offset range on an
executor with assign + seek (no consumer group, nothing committed to Kafka: the offsets live in
Spark's checkpoint, as with Spark's own connector).

Every call has a deadline: an unreachable bootstrap server or a missing topic is an error that
names it, never a hang.
"""

import uuid
from collections.abc import Iterator

from .kafka_options import EARLIEST, LATEST, OptionError, SourceOptions

METADATA_TIMEOUT_S = 15.0
BATCH_ROWS = 8192
# An executor's consumer reads one range from start to end: bigger fetches and a deeper prefetch
# queue than librdkafka's defaults (1 MiB per partition, 100,000 messages) keep it from waiting on
# round trips (about a third faster over a million records here). `kafka.*` options override them.
READ_DEFAULTS = {"fetch.wait.max.ms": 100, "max.partition.fetch.bytes": 8 << 20, "queued.min.messages": 1_000_000}


class KafkaSourceError(RuntimeError):
    """The cluster could not answer what the source needs (the message says which server or topic)."""


def consumer(client: dict):
    from confluent_kafka import Consumer

    conf = {"group.id": f"fauxka-spark-{uuid.uuid4().hex[:12]}", "enable.auto.commit": False,
            "enable.auto.offset.store": False, "auto.offset.reset": "error",
            "enable.partition.eof": True, **client}
    return Consumer(conf)


def topic_partitions(c, options: SourceOptions) -> list[tuple[str, int]]:
    """The (topic, partition) pairs the subscription names, sorted; KafkaSourceError when the
    cluster does not answer in time or a subscribed topic has no readable partition (it does not
    exist, or the cluster refuses it). As Spark's connector: topics subscribed by name are read as
    given, `__`-prefixed ones too; a pattern leaves out the broker's internal topics."""
    from confluent_kafka import KafkaException

    servers = options.client["bootstrap.servers"]
    try:
        metadata = c.list_topics(timeout=METADATA_TIMEOUT_S)
    except KafkaException as exc:
        raise KafkaSourceError(f"no answer from kafka.bootstrap.servers={servers} within "
                               f"{METADATA_TIMEOUT_S:.0f}s: {exc.args[0]}") from None
    sub = options.subscription
    found = {t: sorted(p for p, m in tm.partitions.items() if m.error is None)
             for t, tm in metadata.topics.items() if tm.error is None}
    if sub.kind == "subscribe":
        missing = [t for t in sub.topics if t not in metadata.topics]
        if missing:
            raise KafkaSourceError(f"topic(s) {', '.join(missing)} not found on {servers}")
        unreadable = [f"{t} ({metadata.topics[t].error or 'no readable partition'})"
                      for t in sub.topics if not found.get(t)]
        if unreadable:
            raise KafkaSourceError(f"topic(s) {', '.join(unreadable)} not readable on {servers}")
        return sorted((t, p) for t in set(sub.topics) for p in found[t])
    if sub.kind == "assign":
        missing = [f"{t}-{p}" for t, p in sub.assigned if p not in found.get(t, ())]
        if missing:
            raise KafkaSourceError(f"assigned partition(s) {', '.join(missing)} not found on {servers}")
        return sorted(set(sub.assigned))
    matched = [t for t in found if sub.matches(t)]
    internal = _internal_topics(options.client, matched)
    return sorted((t, p) for t in matched if t not in internal for p in found[t])


def _internal_topics(client: dict, topics: list[str]) -> set[str]:
    """Which of `topics` the broker's Metadata marks internal (Spark's consumer leaves them out of a
    pattern subscription: exclude.internal.topics)."""
    from confluent_kafka import KafkaException, TopicCollection
    from confluent_kafka.admin import AdminClient

    if not topics:
        return set()
    admin = AdminClient(dict(client))
    futures = admin.describe_topics(TopicCollection(topics), request_timeout=METADATA_TIMEOUT_S)
    internal = set()
    for name, future in futures.items():
        try:
            if future.result(timeout=METADATA_TIMEOUT_S).is_internal:
                internal.add(name)
        except KafkaException:
            continue  # deleted meanwhile: nothing to leave out
    return internal


def watermarks(c, pairs: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, int]]:
    """(log start, end) per partition; the end is the last stable offset under read_committed."""
    from confluent_kafka import KafkaException, TopicPartition

    result = {}
    for t, p in pairs:
        try:
            result[(t, p)] = c.get_watermark_offsets(TopicPartition(t, p), timeout=METADATA_TIMEOUT_S)
        except KafkaException as exc:
            raise KafkaSourceError(f"offsets of {t}-{p}: {exc.args[0]}") from None
    return result


def by_timestamp(c, wanted: dict[tuple[str, int], int], ends: dict) -> dict[tuple[str, int], int]:
    """The first offset at or after each timestamp (ListOffsets); the end when there is none."""
    from confluent_kafka import KafkaException, TopicPartition

    if not wanted:
        return {}
    try:
        found = c.offsets_for_times([TopicPartition(t, p, ts) for (t, p), ts in wanted.items()],
                                    timeout=METADATA_TIMEOUT_S)
    except KafkaException as exc:
        raise KafkaSourceError(f"offsets by timestamp: {exc.args[0]}") from None
    return {(tp.topic, tp.partition): tp.offset if tp.offset >= 0 else ends[(tp.topic, tp.partition)][1]
            for tp in found}


def resolve(position, pairs, marks, default: int) -> dict[tuple[str, int], int]:
    """"earliest"/"latest"/{topic: {partition: offset}} as an offset per partition; -2/-1 resolved."""
    result = {}
    for tp in pairs:
        if position == "earliest":
            offset = EARLIEST
        elif position == "latest":
            offset = LATEST
        else:
            if tp[0] not in position:
                raise OptionError(f"offsets JSON names no offset for topic {tp[0]}")
            offset = position[tp[0]].get(tp[1], default)
        result[tp] = marks[tp][0] if offset == EARLIEST else marks[tp][1] if offset == LATEST else offset
    return result


def _timestamps(name: str, given: dict, pairs) -> dict[tuple[str, int], int]:
    """{(topic, partition): ms} for every partition read; OptionError naming those `given` lacks
    (Spark's connector wants exactly the partitions it reads)."""
    missing = [f"{t}-{p}" for t, p in pairs if p not in given.get(t, {})]
    if missing:
        raise OptionError(f"{name} names no timestamp for {', '.join(missing)}")
    return {tp: given[tp[0]][tp[1]] for tp in pairs}


def starting_offsets(c, options: SourceOptions, pairs, marks) -> dict[tuple[str, int], int]:
    """startingTimestamp, else startingOffsetsByTimestamp, else startingOffsets (Spark's order)."""
    if options.starting_timestamp is not None:
        return by_timestamp(c, {tp: options.starting_timestamp for tp in pairs}, marks)
    if options.starting_by_timestamp is not None:
        return by_timestamp(c, _timestamps("startingOffsetsByTimestamp", options.starting_by_timestamp, pairs), marks)
    return resolve(options.starting, pairs, marks, EARLIEST)


def ending_offsets(c, options: SourceOptions, pairs, marks) -> dict[tuple[str, int], int]:
    """endingTimestamp, else endingOffsetsByTimestamp, else endingOffsets (batch only): by
    timestamp, the first offset at or after it, or the latest when no record is that late."""
    if options.ending_timestamp is not None:
        return by_timestamp(c, {tp: options.ending_timestamp for tp in pairs}, marks)
    if options.ending_by_timestamp is not None:
        return by_timestamp(c, _timestamps("endingOffsetsByTimestamp", options.ending_by_timestamp, pairs), marks)
    return resolve(options.ending, pairs, marks, LATEST)


def read_range(client: dict, topic: str, partition: int, start: int, end: int, *,
               fail_on_data_loss: bool, include_headers: bool, poll_timeout_ms: int,
               arrow_schema) -> Iterator:
    """Records [start, end) of one partition as Arrow record batches in the source's schema.
    Records deleted before `start` could be read fail the read (failOnDataLoss) or are skipped."""
    import time

    from confluent_kafka import KafkaError, TopicPartition

    c = consumer({**READ_DEFAULTS, **client})
    try:
        low, high = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=METADATA_TIMEOUT_S)
        if start < low:
            if fail_on_data_loss:
                raise KafkaSourceError(
                    f"{topic}-{partition}: offsets {start}..{low - 1} were deleted (log start {low}) "
                    "before they were read; set failOnDataLoss=false to skip them")
            start = low
        if start >= end:
            return
        c.assign([TopicPartition(topic, partition, start)])
        cols: dict[str, list] = _columns(include_headers)
        keys, values, offsets = cols["key"].append, cols["value"].append, cols["offset"].append
        timestamps, kinds = cols["timestamp"].append, cols["timestampType"].append
        position = start
        deadline = time.monotonic() + poll_timeout_ms / 1000
        while position < end:
            messages = c.consume(num_messages=BATCH_ROWS, timeout=0.5)
            if not messages:
                if time.monotonic() > deadline:
                    raise KafkaSourceError(f"{topic}-{partition}: no record at offset {position} within "
                                           f"kafkaConsumer.pollTimeoutMs={poll_timeout_ms}")
                continue
            deadline = time.monotonic() + poll_timeout_ms / 1000
            for m in messages:
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        position = max(position, m.offset())  # control records / aborted data end here
                        continue
                    raise KafkaSourceError(f"{topic}-{partition}: {err.str()}")
                offset = m.offset()
                if offset >= end:
                    position = end
                    break
                kind, ts = m.timestamp()
                keys(m.key())
                values(m.value())
                offsets(offset)
                timestamps(ts)
                kinds(kind)
                if include_headers:
                    cols["headers"].append([{"key": k, "value": v} for k, v in (m.headers() or [])])
                position = offset + 1
            if len(cols["offset"]) >= BATCH_ROWS or (position >= end and cols["offset"]):
                yield _batch(cols, topic, partition, arrow_schema)
                cols = _columns(include_headers)
                keys, values, offsets = cols["key"].append, cols["value"].append, cols["offset"].append
                timestamps, kinds = cols["timestamp"].append, cols["timestampType"].append
        if cols["offset"]:
            yield _batch(cols, topic, partition, arrow_schema)
    finally:
        c.close()


def _columns(include_headers: bool) -> dict[str, list]:
    return {n: [] for n in ("key", "value", "offset", "timestamp", "timestampType", *(("headers",) * include_headers))}


def _batch(cols: dict, topic: str, partition: int, schema):
    """One Arrow record batch in the source's schema: per-record lists as they came from
    librdkafka, the columns that are the same for every record made whole, milliseconds to
    Spark's microseconds and librdkafka's timestamp types (1 create, 2 log append) to Spark's (0, 1)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(cols["offset"])
    made = {"topic": pa.repeat(pa.scalar(topic, pa.string()), n),
            "partition": pa.repeat(pa.scalar(partition, pa.int32()), n),
            "timestamp": pc.multiply(pa.array(cols["timestamp"], pa.int64()), 1000),
            "timestampType": pc.subtract(pa.array(cols["timestampType"], pa.int32()), 1)}
    arrays = [(made[f.name] if f.name in made else pa.array(cols[f.name], f.type)).cast(f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
