"""Kafka's own Java client (kafka-clients 3.9.1) against the shared cluster: records round-trip with
keys, headers and every codec; a group of two members splits the partitions, commits, survives a
member leaving and restarts from its commits; a transactional producer commits, aborts and is
fenced, read_committed sees only what was committed, consume-transform-produce commits the group's
offsets with its output; AdminClient describes the cluster, creates, describes, alters, grows and
deletes a topic. One JVM runs every scenario (tests/clients/java/ClientScenarios.java)."""

import pytest

from tests.client_programs import java_command, run_every_scenario, scenario


# the first test also runs the module fixture: the JVM with every scenario: 25-40 s at load average 30 on 2 cores, 80 s at 50
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def java(cluster):
    return run_every_scenario(cluster, java_command(), "java")


def test_records_round_trip_with_keys_headers_and_every_codec(java):
    result = scenario(java[0], "produce")
    sent, received = result["sent"], result["received"]
    assert len(sent) == 25 and {s["codec"] for s in sent} == {"none", "gzip", "snappy", "lz4", "zstd"}
    by_position = {(r["partition"], r["offset"]): r for r in received}
    assert len(by_position) == len(received) == len(sent)  # no record twice, none missing
    for s in sent:
        r = by_position[(s["partition"], s["offset"])]
        assert (r["key"], r["value"], r["headers"], r["timestamp"]) == (s["key"], s["value"], s["headers"], s["timestamp"])
        assert r["timestamp_type"] == "CreateTime"
    with_key = [s for s in sent if s["key"] is not None]
    assert all(s["timestamp"] >= 1_700_000_000_000 and len(s["headers"]) == 2 for s in with_key)
    assert [h for h in with_key[1]["headers"]] == [["codec", "6e6f6e65"], ["index", "01ff"]]
    tombstones = [s for s in sent if s["key"] is None]
    assert len(tombstones) == 5 and all(t["value"] is None and t["partition"] == 2 for t in tombstones)
    # offsets are dense per partition: every record lands once, in order
    for partition in {s["partition"] for s in sent}:
        offsets = sorted(s["offset"] for s in sent if s["partition"] == partition)
        assert offsets == list(range(offsets[0], offsets[0] + len(offsets)))


def test_group_of_two_splits_partitions_commits_and_rebalances(java, cluster):
    result = scenario(java[0], "group")
    topic = java[1]["group"]
    every = [f"{topic}-{p}" for p in range(4)]
    first, second = result["assignments"]
    assert first and second and sorted(first + second) == every  # disjoint and complete
    assert len(first) == len(second) == 2  # the range assignor's split of 4 partitions over 2 members
    stable = result["described_stable"]
    assert stable["state"] == "Stable" and stable["protocol"] == "range"
    assert stable["coordinator"] in cluster.brokers
    assert [(m["client_id"], m["assignment"]) for m in stable["members"]] == [("member-1", first), ("member-2", second)]
    assert result["committed"] == {p: 10 for p in every}
    assert result["after_leave"] == every
    assert result["described_empty"]["state"] == "Empty" and result["described_empty"]["members"] == []
    assert result["restart_positions"] == {p: 10 for p in every}  # from the group's commits
    assert result["restart_seen"] == []
    assigned = [e for e in result["rebalance_events"] if "assigned" in e]
    assert {e["member"] for e in assigned} == {"member-1", "member-2"}


def test_transactions_commit_abort_fence_and_send_offsets(java):
    result = scenario(java[0], "transactions")
    committed = ["committed-0", "committed-1", "committed-2", "committed-3", "committed-4", "committed-by-successor"]
    assert result["read_committed"] == committed
    assert result["read_uncommitted"] == committed[:3] + ["aborted-0", "aborted-1", "aborted-2"] + committed[3:]
    assert "ProducerFencedException" in result["fenced_errors"], result["fenced_errors"]
    # 9 records and 4 transaction markers
    assert result["input_end_offset"] == 13
    assert result["ctp_committed"] == {f"{java[1]['txn-in']}-0": 13}
    assert result["ctp_output"] == [v.upper() for v in committed]


def test_admin_client_cluster_topics_and_configs(java, cluster):
    result = scenario(java[0], "admin")
    assert result["nodes"] == [{"id": i, "host": "127.0.0.1", "port": b.port} for i, b in cluster.brokers.items()]
    assert result["controller"] == cluster.controller_id()
    assert result["cluster_id"] == cluster.metadata(1).cluster_id
    assert result["create_again_error"] == "TopicExistsException"
    described = result["described"]
    assert described["internal"] is False and described["topic_id"] != "AAAAAAAAAAAAAAAAAAAAAA"
    assert [p["partition"] for p in described["partitions"]] == [0, 1, 2]
    for p in described["partitions"]:
        assert sorted(p["replicas"]) == [1, 2, 3] and p["leader"] in p["isr"] and set(p["isr"]) <= {1, 2, 3}
    topic_configs = result["topic_configs"]
    assert topic_configs["retention.ms"] == ["3600000", "DYNAMIC_TOPIC_CONFIG", False, False]
    assert topic_configs["min.insync.replicas"] == ["2", "DYNAMIC_TOPIC_CONFIG", False, False]
    assert topic_configs["cleanup.policy"] == ["delete", "DEFAULT_CONFIG", False, False]
    assert topic_configs["segment.bytes"] == ["1073741824", "DEFAULT_CONFIG", False, False]
    broker_configs = result["broker_configs"]
    assert broker_configs["broker.id"] == ["1", "STATIC_BROKER_CONFIG", True, False]
    assert broker_configs["log.retention.hours"] == ["168", "DEFAULT_CONFIG", True, False]
    altered = result["altered_configs"]
    assert altered["retention.ms"] == ["7200000", "DYNAMIC_TOPIC_CONFIG", False, False]
    assert altered["min.insync.replicas"] == ["1", "DEFAULT_CONFIG", False, False]
    assert [p["partition"] for p in result["partitions_after_increase"]] == [0, 1, 2, 3, 4]
    assert result["listed_before_delete"] is True
    assert result["describe_deleted_error"] == "UnknownTopicOrPartitionException"

