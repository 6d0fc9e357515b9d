"""Audit lines to events (malformed lines kept aside and counted), and the report's tables.

Every table is a function of `Frames`: the cached `base` frame (one row per non-blank input line,
with `malformed` set and `line` holding the text of a line a table shows whole, null otherwise) and
the cached `counts` of its lines per combination of the dimensions most tables group by.
"""

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from . import rollups

from .schema import AUDIT_SCHEMA, CORE_SCHEMA, CORRUPT, POLICY_VIOLATION, REQUEST_TIMED_OUT, REQUIRED
from .schema import RULE_PATTERN

PERCENTILES = (0.5, 0.95, 0.99)
PERCENTILE_ACCURACY = 10000  # exact for up to 10,000 events per group; 1/10,000 rank error beyond


def read_lines(spark: SparkSession, files: list[str]) -> DataFrame:
    """(source, value): every line of every file; gzip is decompressed by file name (.gz). The
    source is the file's URI as Spark gives it: `source_name` makes it a path, once per file in
    the few rows that name one rather than on every line."""
    if not files:
        return spark.createDataFrame([], "source string, value string")
    return spark.read.text(files).select(F.col("_metadata.file_path").alias("source"), "value")


def source_name(source: Column) -> Column:
    """A file URI as its path (percent-decoded; java.net.URI leaves '+' as it is, url_decode would
    not); a topic-partition source (letters, digits, '.', '_', '-') is left as it is."""
    return F.url_decode(F.regexp_replace(F.regexp_replace(source, "^file:(//)?", ""), r"\+", "%2B"))


def read_topic(spark: SparkSession, bootstrap: str, topic: str, options: dict | None = None) -> DataFrame:
    """(source, value): every record of `topic` (the controller's `audit.topic`), its source
    "topic-partition"; through the fauxka-kafka data source (fauxka/pipeline/kafka_source.py)."""
    from . import kafka_source

    kafka_source.register(spark)
    reader = (spark.read.format(kafka_source.FORMAT).option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).options(**(options or {})))
    return lines_of_records(reader.load())


def lines_of_records(records: DataFrame) -> DataFrame:
    """Kafka records (the source's schema) as (source, value) lines."""
    return records.select(F.concat_ws("-", "topic", F.col("partition").cast("string")).alias("source"),
                          F.col("value").cast("string").alias("value"))


def _from_json(value: Column, schema) -> Column:
    return F.from_json(value, schema, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT})


def parse(lines: DataFrame) -> DataFrame:
    """The base frame: blank lines dropped, each other line parsed with CORE_SCHEMA, only the
    columns a table reads kept (`api_version` is checked for its type, not kept). `line` keeps
    the text of the lines a table shows whole: malformed ones and REQUEST_TIMED_OUT events."""
    parsed = (lines.where(F.trim("value") != "")
              .select("source", "value", _from_json(F.col("value"), CORE_SCHEMA).alias("e")))
    malformed = (F.col("e").isNull() | F.col(f"e.{CORRUPT}").isNotNull()
                 | _any([F.col(f"e.{name}").isNull() for name in REQUIRED]))
    fields = [F.col(f"e.{f.name}").alias(f.name) for f in CORE_SCHEMA.fields if f.name not in (CORRUPT, "api_version")]
    shown = malformed | (F.col("e.error_code") == REQUEST_TIMED_OUT)
    return parsed.select("source", malformed.alias("malformed"), F.when(shown, F.col("value")).alias("line"), *fields)


def _any(conditions: list[Column]) -> Column:
    result = conditions[0]
    for condition in conditions[1:]:
        result = result | condition
    return result


# What `counts` groups by (with source, malformed, forwarded and the policy rule)
DIMENSIONS = ("principal", "api", "error_code", "validate_only", "receiving_broker")


class Frames:
    """What every table is built from. `base`: one row per non-blank line (the JSON parsed once),
    cached. `counts`: lines counted per source and combination of DIMENSIONS, `forwarded` and
    policy `rule`, with the time span of their events: a few thousand rows for a million events,
    collected once and rolled up on the driver (fauxka/pipeline/rollups.py) for most tables and the totals."""

    def __init__(self, lines: DataFrame):
        self.base = parse(lines).cache()
        self.counts = _counts(self.base)

    def unpersist(self) -> None:
        self.base.unpersist()


def _counts(base: DataFrame) -> DataFrame:
    good = ~F.col("malformed")
    found = F.regexp_extract(F.coalesce("error_message", F.lit("")), RULE_PATTERN, 1)
    rule = F.when(good & (F.col("error_code") == POLICY_VIOLATION),  # the rules policy's key, else the message
                  F.when(found != "", found).otherwise(F.coalesce("error_message", F.lit("(no message)"))))
    first, last = F.min(F.when(good, F.col("ts"))), F.max(F.when(good, F.col("ts")))
    return base.groupBy("source", "malformed", *[F.when(good, F.col(c)).alias(c) for c in DIMENSIONS],
                        (good & F.col("forwarded_by").isNotNull()).alias("forwarded"), rule.alias("rule")).agg(
        F.count(F.lit(1)).alias("n"), first.alias("first_ts"), last.alias("last_ts"),
        F.timestamp_seconds(first).alias("first_event"), F.timestamp_seconds(last).alias("last_event")
    ).withColumn("source", source_name(F.col("source")))


def events(frames: Frames) -> DataFrame:
    """Every event (well-formed line) with its `time` and `path` (direct or forwarded)."""
    return (frames.base.where(~F.col("malformed")).withColumn("time", F.timestamp_seconds("ts"))
            .withColumn("path", F.when(F.col("forwarded_by").isNull(), "direct").otherwise("forwarded")))


def malformed(frames: Frames) -> DataFrame:
    return frames.base.where(F.col("malformed")).select(source_name(F.col("source")).alias("source"), "line")


def errors(frames: Frames) -> DataFrame:
    """Failed events per error code, message and api (rollups.errors joins each message's apis):
    a plain hash aggregation, where collecting the apis per message in Spark took a sort."""
    return (events(frames).where(F.col("error_code") != 0)
            .groupBy("error_code", "error_message", "api").agg(F.count(F.lit(1)).alias("events")))


def latency(frames: Frames) -> DataFrame:
    q = F.percentile_approx("latency_ms", list(PERCENTILES), PERCENTILE_ACCURACY)
    return (events(frames).groupBy("api", "path")
            .agg(F.count(F.lit(1)).alias("events"), q.alias("q"), F.max("latency_ms").alias("max_ms"))
            .select("api", "path", "events", *[F.col("q")[i].alias(f"p{round(p * 100)}_ms")
                                               for i, p in enumerate(PERCENTILES)], "max_ms"))


def timeouts(frames: Frames) -> DataFrame:
    """Every REQUEST_TIMED_OUT event, whole: its line parsed again for the DETAIL fields."""
    detail = _from_json(F.col("line"), AUDIT_SCHEMA)
    return events(frames).where(F.col("error_code") == REQUEST_TIMED_OUT).select(
        "time", "principal", detail["client_address"].alias("client_address"), "receiving_broker", "forwarded_by",
        "api", *[detail[name].alias(name) for name in ("resource_type", "resource_name", "action")],
        "validate_only", "latency_ms", "error_message")


def timeline(frames: Frames) -> DataFrame:
    return (events(frames).groupBy(F.date_trunc("minute", "time").alias("minute"))
            .agg(F.count(F.lit(1)).alias("writes"), F.count(F.when(F.col("error_code") != 0, 1)).alias("errors"),
                 F.count(F.when(F.col("validate_only"), 1)).alias("validate_only")))


# The tables Spark computes from `base` (and what the driver does with the result), and when
# `counts` shows one would be empty (no query then)
QUERIES: dict[str, Callable[[Frames], DataFrame]] = {
    "errors": errors, "latency": latency, "timeouts": timeouts, "timeline": timeline, "malformed": malformed}
_FINISH: dict[str, Callable[[pa.Table], pa.Table]] = {"errors": rollups.errors}
_NONE_WHEN = {"errors": lambda c: not pc.any(pc.not_equal(_events(c)["error_code"], 0)).as_py(),
              "latency": lambda c: _events(c).num_rows == 0, "timeline": lambda c: _events(c).num_rows == 0,
              "timeouts": lambda c: not pc.any(pc.equal(_events(c)["error_code"], REQUEST_TIMED_OUT)).as_py(),
              "malformed": lambda c: not pc.any(c["malformed"]).as_py()}

# Every table in the report's order, with the sort it is written in ("-column" is descending)
TABLES: dict[str, list[str]] = {
    "sources": ["source"],
    "outcomes": ["principal", "api", "-events", "outcome"],
    "validate_only": ["api"],
    "errors": ["-events", "error_code", "error_message"],
    "forwarding": ["receiving_broker"],
    "latency": ["api", "path"],
    "policy_rules": ["-events", "rule"],
    "policy_principals": ["principal", "-events", "rule"],
    "timeouts": ["time", "resource_name"],
    "timeline": ["minute"],
    "malformed": ["source"],
}


def collect_counts(frames: Frames) -> pa.Table:
    """`counts` on the driver (the one pass over every event, filling the cache of `base`)."""
    return frames.counts.toArrow()


def table(name: str, frames: Frames, counts: pa.Table) -> pa.Table:
    """One table, sorted: rolled up from `counts`, or a Spark query over `base` (skipped, with the
    query's schema and no rows, when `counts` shows it would find nothing)."""
    if name in rollups.ROLLUPS:
        return rollups.sort(rollups.ROLLUPS[name](counts), TABLES[name])
    query = QUERIES[name](frames)
    if _NONE_WHEN[name](counts):
        query = query.limit(0)
    result = query.toArrow()
    return rollups.sort(_FINISH[name](result) if name in _FINISH else result, TABLES[name])


def _events(counts: pa.Table) -> pa.Table:
    return counts.filter(pc.invert(counts["malformed"]))


def totals(counts: pa.Table) -> dict:
    """The summary (rollups.totals): lines, events, malformed, principals, brokers, time span."""
    return rollups.totals(counts)
