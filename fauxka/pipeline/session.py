"""A SparkSession sized for a small machine; any master URL is passed to Spark unchanged."""

import os
import sys

DEFAULT_MASTER = "local[2]"

# Settings for a laptop or CI box: few shuffle partitions, no web UI, the driver on loopback
# (a remote cluster needs a reachable driver: override with --conf spark.driver.host=...).
DEFAULT_CONF = {
    "spark.app.name": "fauxka-report",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.adaptive.enabled": "false",  # a few static partitions; AQE only adds stages here
}


def session_conf(overrides: dict[str, str] | None = None) -> dict[str, str]:
    return {**DEFAULT_CONF, **(overrides or {})}


def build(master: str | None = None, overrides: dict[str, str] | None = None):
    """getOrCreate a SparkSession on `master` (local[2] by default) with DEFAULT_CONF + overrides."""
    # Python workers (if Spark ever starts one) run this interpreter, not whatever `python` is on PATH
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = session_conf(overrides)
    if conf.get("spark.driver.bindAddress") == "127.0.0.1":
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # else a warning about the hostname's address
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master or DEFAULT_MASTER)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def parse_conf(pairs: list[str]) -> dict[str, str]:
    """KEY=VALUE strings (the CLI's --conf) as a dict; ValueError on a pair without '='."""
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--conf expects KEY=VALUE, got {pair!r}")
        conf[key.strip()] = value
    return conf
