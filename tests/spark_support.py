"""The one SparkSession of a test run: `from tests.spark_support import spark` in a test module.

Every module that imports the fixture gets the same session (one JVM for the whole run); it is
stopped when the test session ends."""

import os
import sys

import pytest

from fauxka.pipeline import inputs, tables

_session = None


@pytest.fixture(scope="session")
def spark():
    global _session
    if _session is None:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from fauxka.pipeline import session

        # C1 only: a JVM that starts and warms up faster; the tests' data is small
        _session = session.build("local[2]", {"spark.sql.shuffle.partitions": "2",
                                              "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1"})
    yield _session
    if _session is not None:
        _session.stop()
        _session = None


def collect_tables(spark, paths, *names: str) -> dict:
    """The named tables (lists of dicts) and "totals" for the audit files at `paths`."""
    frames = tables.Frames(tables.read_lines(spark, inputs.resolve([str(p) for p in paths])))
    try:
        counts = tables.collect_counts(frames)
        found = {name: tables.table(name, frames, counts).to_pylist() for name in names}
        return {**found, "totals": tables.totals(counts)}
    finally:
        frames.unpersist()
