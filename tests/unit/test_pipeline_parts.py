"""The audit pipeline's parts that need no Spark: inputs, settings, the command line, rendering."""

import gzip
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fauxka import cli
from fauxka.pipeline import inputs, markdown, session
from fauxka.pipeline.schema import error_name


def touch(path, text="{}\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_a_directory_means_its_audit_files_below_it(tmp_path):
    a = touch(tmp_path / "run/audit-1.log")
    b = touch(tmp_path / "run/nested/audit-2.log.gz")
    touch(tmp_path / "run/broker-1.log")
    touch(tmp_path / "run/.hidden/audit-3.log")
    assert inputs.resolve([str(tmp_path / "run")]) == [a, b]
    assert inputs.resolve([str(tmp_path / "run"), a]) == [a, b]  # no duplicates


def test_globs_files_and_urls(tmp_path):
    a = touch(tmp_path / "runs/1/audit-1.log")
    b = touch(tmp_path / "runs/2/audit-1.log")
    touch(tmp_path / "runs/2/broker-1.log")
    assert inputs.resolve([str(tmp_path / "runs/*/audit-*")]) == [a, b]
    assert inputs.resolve([str(tmp_path / "runs/*")]) == [a, b]  # directories matched are read as directories
    assert inputs.resolve([str(tmp_path / "**/audit-1.log")]) == [a, b]
    assert inputs.resolve([f"file://{a}"]) == [a]
    assert inputs.resolve(["hdfs://nn:8020/audit/*.log"]) == ["hdfs://nn:8020/audit/*.log"]


def test_an_existing_directory_without_audit_files_is_empty_but_a_missing_path_is_an_error(tmp_path):
    assert inputs.resolve([str(tmp_path)]) == []
    with pytest.raises(inputs.InputError, match="no such file"):
        inputs.resolve([str(tmp_path / "missing.log")])
    with pytest.raises(inputs.InputError, match="no file matches"):
        inputs.resolve([str(tmp_path / "*.log")])


def test_small_machine_settings_and_overrides():
    conf = session.session_conf({"spark.sql.shuffle.partitions": "8"})
    assert conf["spark.ui.enabled"] == "false" and conf["spark.sql.shuffle.partitions"] == "8"
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert session.DEFAULT_MASTER == "local[2]"
    assert session.parse_conf(["a=b=c", "x="]) == {"a": "b=c", "x": ""}
    with pytest.raises(ValueError):
        session.parse_conf(["nothing"])


def test_error_names_are_kafkas():
    assert (error_name(0), error_name(7), error_name(44), error_name(-1)) == (
        "NONE", "REQUEST_TIMED_OUT", "POLICY_VIOLATION", "UNKNOWN_SERVER_ERROR")
    assert error_name(12345) == "UNKNOWN(12345)"


def test_report_command_passes_master_and_conf_unchanged(monkeypatch, tmp_path):
    import fauxka.pipeline.job
    import fauxka.report

    calls = []
    monkeypatch.setattr(fauxka.pipeline.job, "run", lambda audit, out, **kw: calls.append((audit, out, kw)))
    monkeypatch.setattr(fauxka.report, "_existing_session", lambda: None)
    argv = ["report", "--audit", "a", "--audit", "b/*.gz", "--out", str(tmp_path),
            "--master", "spark://10.0.0.1:7077", "--conf", "spark.executor.memory=2g"]
    assert cli.main(argv) == 0
    assert calls == [(["a", "b/*.gz"], tmp_path, {"master": "spark://10.0.0.1:7077", "spark": None,
                                                  "conf": {"spark.executor.memory": "2g"}, "topic": None})]
    calls.clear()
    assert cli.main(["report", "--bootstrap", "h:9092", "--topic", "audit", "--out", str(tmp_path),
                     "--kafka", "security.protocol=SSL"]) == 0
    [(audit, _, kw)] = calls
    assert audit == [] and kw["topic"] == fauxka.pipeline.job.TopicInput("h:9092", "audit", {"kafka.security.protocol": "SSL"})
    for bad in (["--bootstrap", "h:9092"], ["--audit", "a", "--bootstrap", "h:1", "--topic", "t"], ["--audit", "a", "--follow"],
                []):
        assert cli.main(["report", *bad, "--out", str(tmp_path)]) == 2, bad
    assert cli.main(["report", "--audit", "a", "--out", str(tmp_path), "--conf", "bad"]) == 2
    with pytest.raises(SystemExit):
        cli.main(["report", "--audit", "a"])  # --out is required


def write_tables(out, **rows):
    (out / "tables").mkdir(parents=True)
    for name, items in rows.items():
        pq.write_table(pa.Table.from_pylist(items), out / "tables" / f"{name}.parquet")


def test_report_renders_from_parquet_alone_with_long_spans_and_clipped_tables(tmp_path):
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    minutes = [t0 + timedelta(minutes=m) for m in (0, 1, 5, 3 * 24 * 60)]  # three days: gaps left out
    write_tables(
        tmp_path,
        timeline=[{"minute": m, "writes": 10, "errors": 2, "validate_only": 1} for m in minutes],
        outcomes=[{"principal": f"User:u{i}", "api": "create_topics", "outcome": "OK", "error_code": 0, "events": 1}
                  for i in range(40)],
        latency=[{"api": "create_topics", "path": p, "events": 20, "p50_ms": 1.0, "p95_ms": 4.0, "p99_ms": 9.0,
                  "max_ms": 9.5} for p in ("direct", "forwarded")],
        errors=[{"error_code": 44, "error_name": "POLICY_VIOLATION", "error_message": f"Rule a.b: x|y {i}",
                 "events": 2, "apis": "create_topics"} for i in range(3)],
        malformed=[{"source": "/x/audit-1.log", "line": "y" * 300}])
    summary = {"events": 40, "malformed": 1, "files": ["/x/audit-1.log"], "first_ts": t0.timestamp(),
               "last_ts": t0.timestamp() + 3 * 86400, "principals": 40, "apis": 1, "receiving_brokers": 1,
               "errors": 8, "validate_only": 4, "forwarded": 20}
    text = markdown.render(tmp_path, summary).read_text()
    assert "15 more row(s) in the Parquet table" in text
    assert "| 44 | POLICY_VIOLATION | 6 | 3 |" in text  # errors by code
    assert r"Rule a.b: x\|y 0" in text and "y" * 99 + "…" in text
    assert "Failed: 8 (20.0%)" in text and "forwarded: 20 (50.0%)" in text
    for png in ("timeline", "outcomes", "latency"):
        assert (tmp_path / f"{png}.png").stat().st_size > 10_000


def test_gzip_helper_round_trip(tmp_path):
    from fauxka.pipeline import synthetic

    path = synthetic.write(tmp_path / "audit-1.log.gz", synthetic.events(3), ["bad"])
    assert gzip.decompress(path.read_bytes()).decode().count("\n") == 4
