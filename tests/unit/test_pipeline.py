"""The audit pipeline's tables on synthetic audit logs with exact expected counts (one
SparkSession for every test, from tests/spark_support.py)."""

import json
import math
from datetime import UTC, datetime

import pyarrow.parquet as pq

from fauxka.pipeline import job, synthetic, tables
from fauxka.pipeline.synthetic import event
from tests.spark_support import collect_tables, spark  # noqa: F401  (the fixture)

T0 = 1_699_999_980.0  # 2023-11-14 22:13:00 UTC, a minute boundary
MAX_PARTITIONS = "Rule fauxka.policy.max.partitions: 3 partitions exceed the maximum of 2"


def minute(offset: int) -> datetime:
    return datetime.fromtimestamp(T0 + 60 * offset, UTC)


def sample() -> list[dict]:
    """110 creates in minute 0 (100 direct on broker 1, 10 forwarded by 3 to broker 2), bob's
    validate_only and policy violations in minute 1, two timeouts and an unknown code in minute 3."""
    items = [event(T0 + i * 0.1, "User:alice", latency_ms=float(i + 1)) for i in range(100)]
    items += [event(T0 + 20 + i, "User:alice", receiving_broker=2, forwarded_by=3, latency_ms=10.0 * (i + 1))
              for i in range(10)]
    items += [event(T0 + 60 + i, "User:bob", validate_only=True, receiving_broker=2) for i in range(4)]
    items += [event(T0 + 65, "User:bob", validate_only=True, error_code=44, error_message=MAX_PARTITIONS)]
    items += [event(T0 + 66 + i, "User:bob", "create_partitions", error_code=44, error_message=MAX_PARTITIONS,
                    action="CREATE_PARTITIONS") for i in range(2)]
    items += [event(T0 + 70, "User:carol", "delete_topics", error_code=44, action="DELETE",
                    error_message="Topic deletion is not allowed")]
    items += [event(T0 + 180 + i, "User:alice", error_code=7, latency_ms=0.5, resource_name=f"slow-{i}")
              for i in range(2)]
    items += [event(T0 + 200, "User:alice", "alter_client_quotas", error_code=9999, error_message="odd",
                    resource_type="CLIENT_QUOTA", action="ALTER")]
    return items


def nearest_rank(values: list[float], p: float) -> float:
    return values[math.ceil(p * len(values)) - 1]


def by(rows: list[dict], *keys: str) -> dict:
    return {tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]]: r for r in rows}


def test_exact_counts_of_every_table(spark, tmp_path):
    path = synthetic.write(tmp_path / "audit-1.log", sample())
    t = collect_tables(spark, [path], *tables.TABLES)
    assert t["totals"]["events"] == 121 and t["totals"]["malformed"] == 0 and t["totals"]["principals"] == 3

    outcomes = {k: r["events"] for k, r in by(t["outcomes"], "principal", "api", "outcome").items()}
    assert outcomes == {
        ("User:alice", "create_topics", "OK"): 110, ("User:alice", "create_topics", "REQUEST_TIMED_OUT"): 2,
        ("User:alice", "alter_client_quotas", "UNKNOWN(9999)"): 1, ("User:bob", "create_topics", "OK"): 4,
        ("User:bob", "create_topics", "POLICY_VIOLATION"): 1, ("User:bob", "create_partitions", "POLICY_VIOLATION"): 2,
        ("User:carol", "delete_topics", "POLICY_VIOLATION"): 1}

    vo = by(t["validate_only"], "api")
    assert (vo["create_topics"]["events"], vo["create_topics"]["validate_only"]) == (117, 5)
    assert vo["create_topics"]["share"] == round(5 / 117, 4) and vo["delete_topics"]["share"] == 0

    errors = {(r["error_code"], r["error_name"], r["error_message"]): (r["events"], r["apis"]) for r in t["errors"]}
    assert errors == {(44, "POLICY_VIOLATION", MAX_PARTITIONS): (3, "create_partitions, create_topics"),
                      (44, "POLICY_VIOLATION", "Topic deletion is not allowed"): (1, "delete_topics"),
                      (7, "REQUEST_TIMED_OUT", None): (2, "create_topics"),
                      (9999, "UNKNOWN(9999)", "odd"): (1, "alter_client_quotas")}

    fwd = {r["receiving_broker"]: (r["events"], r["forwarded"], r["forwarded_share"]) for r in t["forwarding"]}
    assert fwd == {1: (107, 0, 0.0), 2: (14, 10, round(10 / 14, 4))}

    lat = by(t["latency"], "api", "path")
    direct, forwarded = lat[("create_topics", "direct")], lat[("create_topics", "forwarded")]
    assert direct["events"] == 107 and forwarded["events"] == 10
    assert [forwarded[k] for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")] == [50, 100, 100, 100]
    # exact (nearest rank) at this size: 0.5 x2, 1.0 x6, then 2..100
    values = sorted([0.5] * 2 + [1.0] * 6 + list(range(2, 101)))
    assert [direct[k] for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")] == [
        nearest_rank(values, 0.5), nearest_rank(values, 0.95), nearest_rank(values, 0.99), 100] == [47, 95, 99, 100]

    assert {r["rule"]: (r["events"], r["principals"]) for r in t["policy_rules"]} == {
        "fauxka.policy.max.partitions": (3, 1), "Topic deletion is not allowed": (1, 1)}
    assert {(r["principal"], r["rule"]): r["events"] for r in t["policy_principals"]} == {
        ("User:bob", "fauxka.policy.max.partitions"): 3, ("User:carol", "Topic deletion is not allowed"): 1}

    assert sorted(r["resource_name"] for r in t["timeouts"]) == ["slow-0", "slow-1"]
    assert {r["api"] for r in t["timeouts"]} == {"create_topics"}

    timeline = {r["minute"].astimezone(UTC): (r["writes"], r["errors"], r["validate_only"]) for r in t["timeline"]}
    assert timeline == {minute(0): (110, 0, 0), minute(1): (8, 4, 5), minute(3): (3, 3, 0)}


BAD_LINES = ["not json", "[1, 2]", "42", "{}", '{"ts": "soon", "principal": "User:x"}',
             json.dumps(event(T0, error_code=1.5)), '{"ts": 1, "api": "create_topics"', "   "]


def test_malformed_lines_are_counted_per_file_never_fatal(spark, tmp_path):
    good = synthetic.write(tmp_path / "audit-1.log", [event(T0), event(T0 + 1)], BAD_LINES)
    missing_key = {k: v for k, v in event(T0).items() if k != "latency_ms"}
    other = synthetic.write(tmp_path / "audit-2.log", [missing_key, event(T0, "User:x", extra={"a": [1]})])
    t = collect_tables(spark, [tmp_path], "sources", "malformed", "outcomes")
    assert (t["totals"]["events"], t["totals"]["malformed"], t["totals"]["lines"]) == (3, 8, 11)  # blank: no line
    sources = {r["source"]: (r["lines"], r["events"], r["malformed"]) for r in t["sources"]}
    assert sources == {str(good): (9, 2, 7), str(other): (2, 1, 1)}
    compact = json.dumps(missing_key, separators=(",", ":"))  # as synthetic.write wrote it
    assert sorted(r["line"] for r in t["malformed"]) == sorted([*BAD_LINES[:7], compact])
    assert sum(r["events"] for r in t["outcomes"]) == 3


def test_one_broker_only_no_forwarding(spark, tmp_path):
    path = synthetic.write(tmp_path / "audit-1.log", [event(T0 + i, latency_ms=2.0) for i in range(5)])
    t = collect_tables(spark, [path], "forwarding", "latency", "policy_rules", "timeouts")
    assert [(r["receiving_broker"], r["events"], r["forwarded"], r["forwarded_share"]) for r in t["forwarding"]] == [
        (1, 5, 0, 0.0)]
    assert [(r["api"], r["path"], r["p50_ms"], r["p99_ms"]) for r in t["latency"]] == [
        ("create_topics", "direct", 2.0, 2.0)]
    assert t["policy_rules"] == [] and t["timeouts"] == []


def test_report_of_several_runs_by_glob_with_gzip(spark, tmp_path):
    """Two runs (one gzipped, one of two brokers) read through one glob; the broker's other logs
    beside them are not audit files and are not read."""
    run1 = synthetic.write(tmp_path / "runs/a/audit-1.log.gz", synthetic.events(300, seed=1))
    synthetic.write(tmp_path / "runs/b/audit-1.log", synthetic.events(200, seed=2, start_ts=T0 + 86400 * 3))
    synthetic.write(tmp_path / "runs/b/audit-2.log", synthetic.events(100, seed=3, start_ts=T0), ["oops"])
    (tmp_path / "runs/b/broker-1.log").write_text('{"event": "a structlog line, not an audit line"}\n')
    messages = []
    summary = job.run([str(tmp_path / "runs/*/audit-*")], tmp_path / "out", spark=spark, progress=messages.append)
    assert (summary["events"], summary["malformed"], len(summary["files"])) == (600, 1, 3)
    assert str(run1) in summary["files"] and any("[11/11]" in m for m in messages)

    out = tmp_path / "out"
    assert json.loads((out / "summary.json").read_text())["events"] == 600
    outcomes = pq.read_table(out / "tables/outcomes.parquet").to_pylist()
    assert sum(r["events"] for r in outcomes) == 600
    timeline = pq.read_table(out / "tables/timeline.parquet").to_pylist()
    assert sum(r["writes"] for r in timeline) == 600
    assert [r["minute"] for r in timeline] == sorted(r["minute"] for r in timeline)
    forwarding = pq.read_table(out / "tables/forwarding.parquet").to_pylist()
    assert sum(r["forwarded"] for r in forwarding) == summary["forwarded"] > 0
    report = (out / "report.md").read_text()
    assert "600 admin write events from 3 file(s); 1 malformed line(s)" in report
    for png in ("timeline.png", "outcomes.png", "latency.png"):
        assert f"]({png})" in report and (out / png).read_bytes()[:4] == b"\x89PNG"
    assert "fauxka.policy.max.partitions" in report and "REQUEST_TIMED_OUT" in report


def test_report_of_empty_input(spark, tmp_path):
    (tmp_path / "in").mkdir()
    synthetic.write(tmp_path / "in/audit-1.log", [])
    summary = job.run([str(tmp_path / "in")], tmp_path / "out", spark=spark, progress=lambda m: None)
    assert (summary["events"], summary["malformed"], summary["files"]) == (0, 0, [str(tmp_path / "in/audit-1.log")])
    report = (tmp_path / "out/report.md").read_text()
    assert "0 admin write events" in report and "No events" in report
    assert not list((tmp_path / "out").glob("*.png"))
    assert pq.read_table(tmp_path / "out/tables/outcomes.parquet").num_rows == 0
    sources = pq.read_table(tmp_path / "out/tables/sources.parquet").to_pylist()
    assert [(r["source"], r["lines"], r["events"]) for r in sources] == [(str(tmp_path / "in/audit-1.log"), 0, 0)]
    (tmp_path / "nothing").mkdir()
    assert collect_tables(spark, [tmp_path / "nothing"], "outcomes") == {
        "outcomes": [], "totals": {**collect_tables(spark, [tmp_path / "in"])["totals"]}}
