"""Audit lines to events (malformed lines kept aside and counted), and the report's tables.

Every table is a function of the cached `base` frame: one row per non-blank input line, with
`malformed` set and `bad_line` holding the text of a malformed line (null otherwise).
"""

from collections.abc import Callable

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from .schema import AUDIT_SCHEMA, CORRUPT, POLICY_VIOLATION, REQUEST_TIMED_OUT, REQUIRED, RULE_PATTERN
from .schema import error_name_column, outcome_column

PERCENTILES = (0.5, 0.95, 0.99)
PERCENTILE_ACCURACY = 10000  # exact for up to 10,000 events per group; 1/10,000 rank error beyond


def read_lines(spark: SparkSession, files: list[str]) -> DataFrame:
    """(source, value): every line of every file; gzip is decompressed by file name (.gz)."""
    if not files:
        return spark.createDataFrame([], "source string, value string")
    # file_path is a URI: percent-decode it (java.net.URI leaves '+' as it is; url_decode would not)
    path = F.regexp_replace(F.regexp_replace(F.col("_metadata.file_path"), "^file:(//)?", ""), r"\+", "%2B")
    return spark.read.text(files).select(F.url_decode(path).alias("source"), "value")


def read_topic(spark: SparkSession, bootstrap: str, topic: str, options: dict | None = None) -> DataFrame:
    """(source, value): every record of `topic` (the controller's `audit.topic`), its source
    "topic-partition"; through the fauxka-kafka data source (pipeline/kafka_source.py)."""
    from . import kafka_source

    kafka_source.register(spark)
    reader = (spark.read.format(kafka_source.FORMAT).option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).options(**(options or {})))
    return lines_of_records(reader.load())


def lines_of_records(records: DataFrame) -> DataFrame:
    """Kafka records (the source's schema) as (source, value) lines."""
    return records.select(F.concat_ws("-", "topic", F.col("partition").cast("string")).alias("source"),
                          F.col("value").cast("string").alias("value"))


def parse(lines: DataFrame) -> DataFrame:
    """The base frame: blank lines dropped, each other line parsed with the explicit schema."""
    parsed = (lines.where(F.trim("value") != "")
              .select("source", "value", F.from_json("value", AUDIT_SCHEMA, {
                  "mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}).alias("e")))
    malformed = (F.col("e").isNull() | F.col(f"e.{CORRUPT}").isNotNull()
                 | _any([F.col(f"e.{name}").isNull() for name in REQUIRED]))
    fields = [F.col(f"e.{f.name}").alias(f.name) for f in AUDIT_SCHEMA.fields if f.name != CORRUPT]
    return (parsed.select("source", malformed.alias("malformed"),
                          F.when(malformed, F.col("value")).alias("bad_line"), *fields)
            .withColumn("time", F.timestamp_seconds("ts"))
            .withColumn("path", F.when(F.col("forwarded_by").isNull(), "direct").otherwise("forwarded")))


def _any(conditions: list[Column]) -> Column:
    result = conditions[0]
    for condition in conditions[1:]:
        result = result | condition
    return result


def events(base: DataFrame) -> DataFrame:
    return base.where(~F.col("malformed"))


def _share(part: str, whole: str) -> Column:
    return F.round(F.col(part) / F.col(whole), 4)


def sources(base: DataFrame) -> DataFrame:
    """Per input file: lines, events, malformed lines and the time span of its events."""
    good = ~F.col("malformed")
    return base.groupBy("source").agg(
        F.count(F.lit(1)).alias("lines"),
        F.count(F.when(good, 1)).alias("events"),
        F.count(F.when(F.col("malformed"), 1)).alias("malformed"),
        F.min(F.when(good, F.col("time"))).alias("first_event"),
        F.max(F.when(good, F.col("time"))).alias("last_event"))


def malformed(base: DataFrame) -> DataFrame:
    return base.where(F.col("malformed")).select("source", F.col("bad_line").alias("line"))


def outcomes(base: DataFrame) -> DataFrame:
    return (events(base).groupBy("principal", "api", "error_code").agg(F.count(F.lit(1)).alias("events"))
            .select("principal", "api", outcome_column(F.col("error_code")).alias("outcome"), "error_code", "events"))


def validate_only(base: DataFrame) -> DataFrame:
    return (events(base).groupBy("api")
            .agg(F.count(F.lit(1)).alias("events"), F.count(F.when(F.col("validate_only"), 1)).alias("validate_only"))
            .withColumn("share", _share("validate_only", "events")))


def errors(base: DataFrame) -> DataFrame:
    return (events(base).where(F.col("error_code") != 0)
            .groupBy("error_code", "error_message")
            .agg(F.count(F.lit(1)).alias("events"),
                 F.array_join(F.array_sort(F.collect_set("api")), ", ").alias("apis"))
            .select("error_code", error_name_column(F.col("error_code")).alias("error_name"), "error_message",
                    "events", "apis"))


def forwarding(base: DataFrame) -> DataFrame:
    return (events(base).groupBy("receiving_broker")
            .agg(F.count(F.lit(1)).alias("events"), F.count("forwarded_by").alias("forwarded"))
            .withColumn("forwarded_share", _share("forwarded", "events")))


def latency(base: DataFrame) -> DataFrame:
    q = F.percentile_approx("latency_ms", list(PERCENTILES), PERCENTILE_ACCURACY)
    return (events(base).groupBy("api", "path")
            .agg(F.count(F.lit(1)).alias("events"), q.alias("q"), F.max("latency_ms").alias("max_ms"))
            .select("api", "path", "events", *[F.col("q")[i].alias(f"p{round(p * 100)}_ms")
                                               for i, p in enumerate(PERCENTILES)], "max_ms"))


def _violations(base: DataFrame) -> DataFrame:
    rule = F.regexp_extract(F.coalesce("error_message", F.lit("")), RULE_PATTERN, 1)
    return (events(base).where(F.col("error_code") == POLICY_VIOLATION)
            .withColumn("rule", F.when(rule != "", rule)
                        .otherwise(F.coalesce("error_message", F.lit("(no message)")))))


def policy_rules(base: DataFrame) -> DataFrame:
    return (_violations(base).groupBy("rule")
            .agg(F.count(F.lit(1)).alias("events"), F.countDistinct("principal").alias("principals")))


def policy_principals(base: DataFrame) -> DataFrame:
    return _violations(base).groupBy("principal", "rule").agg(F.count(F.lit(1)).alias("events"))


def timeouts(base: DataFrame) -> DataFrame:
    return events(base).where(F.col("error_code") == REQUEST_TIMED_OUT).select(
        "time", "principal", "client_address", "receiving_broker", "forwarded_by", "api", "resource_type",
        "resource_name", "action", "validate_only", "latency_ms", "error_message")


def timeline(base: DataFrame) -> DataFrame:
    return (events(base).groupBy(F.date_trunc("minute", "time").alias("minute"))
            .agg(F.count(F.lit(1)).alias("writes"), F.count(F.when(F.col("error_code") != 0, 1)).alias("errors"),
                 F.count(F.when(F.col("validate_only"), 1)).alias("validate_only")))


# name -> (builder, sort order of the written table; "-column" is descending)
TABLES: dict[str, tuple[Callable[[DataFrame], DataFrame], list[str]]] = {
    "sources": (sources, ["source"]),
    "outcomes": (outcomes, ["principal", "api", "-events", "outcome"]),
    "validate_only": (validate_only, ["api"]),
    "errors": (errors, ["-events", "error_code", "error_message"]),
    "forwarding": (forwarding, ["receiving_broker"]),
    "latency": (latency, ["api", "path"]),
    "policy_rules": (policy_rules, ["-events", "rule"]),
    "policy_principals": (policy_principals, ["principal", "-events", "rule"]),
    "timeouts": (timeouts, ["time", "resource_name"]),
    "timeline": (timeline, ["minute"]),
    "malformed": (malformed, ["source"]),
}


def sort_columns(order: list[str]) -> list[Column]:
    return [F.desc(c[1:]) if c.startswith("-") else F.asc(c) for c in order]


def totals(base: DataFrame) -> dict:
    """One pass for the summary: lines, events, malformed, principals, brokers, time span."""
    good = ~F.col("malformed")
    row = base.agg(
        F.count(F.lit(1)).alias("lines"), F.count(F.when(good, 1)).alias("events"),
        F.count(F.when(F.col("malformed"), 1)).alias("malformed"),
        F.size(F.collect_set(F.when(good, F.col("principal")))).alias("principals"),  # no Expand, unlike
        F.size(F.collect_set(F.when(good, F.col("api")))).alias("apis"),  # three countDistinct
        F.size(F.collect_set(F.when(good, F.col("receiving_broker")))).alias("receiving_brokers"),
        F.count(F.when(good & (F.col("error_code") != 0), 1)).alias("errors"),
        F.count(F.when(good & F.col("validate_only"), 1)).alias("validate_only"),
        F.count(F.when(good & F.col("forwarded_by").isNotNull(), 1)).alias("forwarded"),
        F.min(F.when(good, F.col("ts"))).alias("first_ts"), F.max(F.when(good, F.col("ts"))).alias("last_ts"),
    ).first()
    return row.asDict()
