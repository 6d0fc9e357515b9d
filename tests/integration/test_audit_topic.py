"""The controller's audit trail published to `audit.topic` and `fauxka report --bootstrap --topic`
(and `--follow`) built from it: the same counts as the report from the audit files."""

import json

import pyarrow.parquet as pq
import pytest

from fauxka import cli
from tests.admin_helpers import create_topics, errors, send, topic_spec, unique
from tests.harness import wait_for
from tests.spark_support import spark  # noqa: F401  (the fixture)

TOPIC = "fauxka-audit"


def _records(bootstrap: str) -> list[tuple[bytes, dict]]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("g"), "enable.auto.commit": False})
    try:
        _, high = c.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)
        c.assign([TopicPartition(TOPIC, 0, 0)])
        got = []
        while len(got) < high:
            m = c.poll(5)
            assert m is not None and m.error() is None
            got.append((m.key(), json.loads(m.value())))
        return got
    finally:
        c.close()


@pytest.mark.timeout(360)  # two reports and two follows on Spark: 50 s alone, past 120 s on a loaded box
def test_audit_topic_holds_the_trail_and_the_report_reads_it(spark, make_cluster, tmp_path):  # noqa: F811
    # the controller creates the audit topic itself, as Kafka its internal topics: auto-creation
    # off shows that naming it is enough
    cluster = make_cluster(1, {"audit.topic": TOPIC, "offsets.topic.replication.factor": "1",
                               "auto.create.topics.enable": "false"})
    address = cluster.controller_address()
    names = [unique("a"), unique("b")]
    assert [e[1] for e in errors(create_topics(address, [topic_spec(n, 1, 1) for n in names]))] == [0, 0]
    assert [e[1] for e in errors(create_topics(address, [topic_spec(names[0], 1, 1)]))] == [36]
    # A group coordinator lookup creates __consumer_offsets, audited too. Our consumers below may or
    # may not look one up before they close (librdkafka's timing): one lookup here makes it certain.
    send(address, 10, 3, {"key": unique("g"), "key_type": 0})
    wait_for(lambda: any(e["resource_name"] == "__consumer_offsets" for e in cluster.audit_events()), 30,
             what="__consumer_offsets' creation audited")
    wait_for(lambda: len(_records(cluster.bootstrap)) == len(cluster.audit_events()), 30, 0.5,
             "every audit event in the topic")
    filed = cluster.audit_events()
    [own] = [e for e in filed if e["resource_name"] == TOPIC]  # its creation is on the trail too
    assert own["error_code"] == 0 and own["forwarded_by"] is None and own["principal"] == "User:ANONYMOUS"
    published = _records(cluster.bootstrap)
    assert [e for _, e in published] == filed  # the same events, in order
    assert {k for k, _ in published} == {e["principal"].encode() for e in filed}

    from_files, from_topic = tmp_path / "files", tmp_path / "topic"
    work_dir = cluster.brokers[1].audit_file.parent
    assert cli.main(["report", "--audit", str(work_dir), "--out", str(from_files)]) == 0
    assert cli.main(["report", "--bootstrap", cluster.bootstrap, "--topic", TOPIC, "--out", str(from_topic)]) == 0
    summary = json.loads((from_topic / "summary.json").read_text())
    assert summary["events"] == len(filed) and summary["errors"] == sum(e["error_code"] != 0 for e in filed)
    for name in ("outcomes", "errors", "validate_only"):
        assert (pq.read_table(from_topic / "tables" / f"{name}.parquet").to_pylist()
                == pq.read_table(from_files / "tables" / f"{name}.parquet").to_pylist()), name

    from fauxka.pipeline import follow, job

    followed = tmp_path / "follow"
    source = job.TopicInput(cluster.bootstrap, TOPIC)
    follow.follow(source, followed, spark, available_now=True, progress=lambda m: None)
    assert json.loads((followed / "summary.json").read_text())["events"] == len(filed)
    assert [e[1] for e in errors(create_topics(address, [topic_spec(unique("c"), 1, 1)]))] == [0]
    wait_for(lambda: len(_records(cluster.bootstrap)) == len(filed) + 1, 30, 0.5, "one more audit record")
    follow.follow(source, followed, spark, available_now=True, progress=lambda m: None)  # from its checkpoint
    assert json.loads((followed / "summary.json").read_text())["events"] == len(filed) + 1
    assert (followed / "report.md").is_file()
