"""`fauxka report` over the audit log of a real cluster: exact counts from requests we made
(direct ones to the controller and one forwarded by the other broker)."""

import json

import pyarrow.parquet as pq
import pytest

from fauxka import cli
from tests.admin_helpers import create_topics, delete_topics, errors, topic_spec, unique
from tests.spark_support import spark  # noqa: F401  (the fixture)

POLICY = {"topic.actions.policy.class.name": "fauxka.controller.rules_policy:RulesPolicy",
          "fauxka.policy.max.partitions": "2"}


def table(out, name: str) -> list[dict]:
    return pq.read_table(out / "tables" / f"{name}.parquet").to_pylist()


def test_report_of_a_real_clusters_audit_log(spark, make_cluster, tmp_path, capsys):
    cluster = make_cluster(2, POLICY)
    address = cluster.controller_address()
    ok, dup, vo, slow = unique("ok"), unique("dup"), unique("vo"), unique("slow")
    big = [unique("big"), unique("big")]
    assert [e[1] for e in errors(create_topics(address, [topic_spec(ok, 1), topic_spec(dup, 2)]))] == [0, 0]
    assert [e[1] for e in errors(create_topics(address, [topic_spec(dup, 1)]))] == [36]
    assert [e[1] for e in errors(create_topics(address, [topic_spec(vo, 2), topic_spec(unique("vo"), 3)],
                                               validate_only=True))] == [0, 44]
    assert [e[1] for e in errors(create_topics(address, [topic_spec(n, 3) for n in big]))] == [44, 44]
    assert [e[1] for e in errors(create_topics(address, [topic_spec(slow, 1)], timeout_ms=0))] == [7]
    assert [int(r.error_code) for r in delete_topics(address, [ok])] == [0]
    forwarder = next(b for b in cluster.brokers if b != cluster.controller_id())
    fwd = unique("fwd")  # sent to the other broker, which forwards it to the controller in an envelope
    assert [e[1] for e in errors(create_topics(cluster.address_of(forwarder), [topic_spec(fwd, 1)]))] == [0]
    audited = cluster.audit_events()
    assert len(audited) == 10 and [e["forwarded_by"] for e in audited if e["resource_name"] == fwd] == [forwarder]

    out = tmp_path / "report"
    work_dir = cluster.brokers[1].audit_file.parent  # also holds broker-N.log lines: not audit files
    assert cli.main(["report", "--audit", str(work_dir), "--out", str(out)]) == 0
    progress = capsys.readouterr().err
    assert "fauxka report: [11/11] malformed" in progress and "report.md" in progress

    summary = json.loads((out / "summary.json").read_text())
    assert (summary["events"], summary["malformed"], summary["errors"], summary["validate_only"]) == (10, 0, 5, 2)
    assert summary["forwarded"] == 1 and summary["receiving_brokers"] == 1
    principal = audited[0]["principal"]
    outcomes = {(r["principal"], r["api"], r["outcome"]): r["events"] for r in table(out, "outcomes")}
    assert outcomes == {(principal, "create_topics", "OK"): 4, (principal, "create_topics", "TOPIC_ALREADY_EXISTS"): 1,
                        (principal, "create_topics", "POLICY_VIOLATION"): 3,
                        (principal, "create_topics", "REQUEST_TIMED_OUT"): 1, (principal, "delete_topics", "OK"): 1}
    assert {r["api"]: (r["events"], r["validate_only"]) for r in table(out, "validate_only")} == {
        "create_topics": (9, 2), "delete_topics": (1, 0)}
    assert [(r["rule"], r["events"]) for r in table(out, "policy_rules")] == [("fauxka.policy.max.partitions", 3)]
    assert [(r["principal"], r["events"]) for r in table(out, "policy_principals")] == [(principal, 3)]
    assert [(r["resource_name"], r["api"]) for r in table(out, "timeouts")] == [(slow, "create_topics")]
    assert [(r["receiving_broker"], r["events"], r["forwarded"]) for r in table(out, "forwarding")] == [
        (cluster.controller_id(), 10, 1)]
    codes = {r["error_code"]: r["events"] for r in table(out, "errors") if r["error_code"] != 44}
    assert codes == {36: 1, 7: 1}
    latency = {(r["api"], r["path"]): r["events"] for r in table(out, "latency")}
    assert latency == {("create_topics", "direct"): 8, ("create_topics", "forwarded"): 1,
                       ("delete_topics", "direct"): 1}
    assert sum(r["writes"] for r in table(out, "timeline")) == 10
    controller = cluster.controller_id()
    assert {r["source"].rsplit("/", 1)[1]: r["events"] for r in table(out, "sources")} == {
        f"audit-{b}.log": 10 if b == controller else 0 for b in cluster.brokers}  # the other's is empty
    assert sum(r["errors"] for r in table(out, "timeline")) == 5

    report = (out / "report.md").read_text()
    assert "10 admin write events from 2 file(s); 0 malformed line(s)" in report  # audit-1.log, audit-2.log
    assert "| fauxka.policy.max.partitions | 3 | 1 |" in report
    assert (out / "timeline.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.timeout(360)  # a report on Spark: past 120 s on a loaded box
def test_report_reads_a_topic_named_with_two_underscores(spark, cluster, tmp_path, capsys):  # noqa: F811
    """A topic subscribed by name is read whatever its name (Spark's connector leaves out internal
    topics only from patterns): the audit trail copied into `__<name>` reports every event."""
    from confluent_kafka import Producer

    create_topics(cluster.controller_address(), [topic_spec(unique("audited"), 1)])  # at least one event
    events = cluster.audit_events()
    topic = "__" + unique("audit")
    assert [e[1] for e in errors(create_topics(cluster.controller_address(), [topic_spec(topic, 2, 3)]))] == [0]
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for event in events:
        producer.produce(topic, json.dumps(event).encode(), event["principal"].encode())
    assert producer.flush(30) == 0

    out = tmp_path / "report"
    assert cli.main(["report", "--bootstrap", cluster.bootstrap, "--topic", topic, "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["events"] == len(events) > 0
    assert summary["errors"] == sum(e["error_code"] != 0 for e in events)
    assert f"{len(events)} admin write events" in (out / "report.md").read_text()
