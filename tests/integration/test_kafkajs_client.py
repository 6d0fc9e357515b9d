"""kafkajs (2.2.4, npm) against the shared cluster: records round-trip with keys, headers and gzip; a
group of two members splits the partitions, commits, survives a member leaving and restarts from its
commits; a transactional producer commits, aborts and is fenced, read_committed sees only what was
committed, consume-transform-produce commits the group's offsets with its output; the admin client
describes the cluster, creates, describes, alters, grows and deletes a topic. One node process runs
every scenario (tests/clients/js/scenarios.js)."""

import pytest

from tests.admin_helpers import unique
from tests.client_programs import node_command, run_every_scenario, scenario


# the first test also runs the module fixture: node with every scenario: 25-40 s at load average 30 on 2 cores, 80 s at 50
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def kafkajs(cluster):
    # its own bootstrap list: one broker, not the controller
    return run_every_scenario(cluster, node_command(), "kafkajs",
                              autocreate=[unique("kafkajs-auto"), cluster.non_controller_address()])


def test_records_round_trip_with_keys_headers_and_gzip(kafkajs):
    result = scenario(kafkajs[0], "produce")
    sent, received = result["sent"], result["received"]
    assert len(sent) == 14
    by_position = {(r["partition"], r["offset"]): r for r in received}
    assert len(by_position) == len(received) == len(sent)
    for s in sent:
        r = by_position[(s["partition"], s["offset"])]
        assert (r["key"], r["value"], r["headers"]) == (s["key"], s["value"], s["headers"])
        if s["timestamp"] is not None:
            assert r["timestamp"] == s["timestamp"]
    assert sent[1]["headers"] == [["codec", "6e6f6e65"], ["index", "01ff"]]
    assert [(s["key"], s["value"]) for s in sent if s["key"] is None] == [(None, None)] * 2


def test_group_of_two_splits_partitions_commits_and_rebalances(kafkajs):
    result = scenario(kafkajs[0], "group")
    first, second = result["assignments"]
    assert len(first) == len(second) == 2 and sorted(first + second) == [0, 1, 2, 3]
    assert result["committed"] == {str(p): 10 for p in range(4)}
    stable = result["described_stable"]
    assert stable["state"] == "Stable" and stable["protocol"] == "RoundRobinAssigner"
    assert sorted(m["assignment"] for m in stable["members"]) == sorted([first, second])
    assert result["distinct_seen"] == 40
    assert result["after_leave"] == [0, 1, 2, 3]
    assert result["described_empty"] == "Empty"
    assert result["restart_seen"] == ["1:10:after-restart"]  # nothing before the commits again


def test_transactions_commit_abort_fence_and_send_offsets(kafkajs):
    result = scenario(kafkajs[0], "transactions")
    committed = ["committed-0", "committed-1", "committed-2", "committed-3", "committed-4", "committed-by-successor"]
    assert result["read_committed"] == committed
    assert result["read_uncommitted"] == committed[:3] + ["aborted-0", "aborted-1", "aborted-2"] + committed[3:]
    # kafkajs sends AddPartitionsToTxn v1: Kafka answers a fenced epoch there as before KIP-588
    assert result["fenced_error"] == "INVALID_PRODUCER_EPOCH"
    # c0-c2, marker, a0-a2, marker, c3-c4, marker, the successor's record
    assert result["ctp_last_input_offset"] == 11
    assert result["ctp_committed"] == 12
    assert result["ctp_output"] == [v.upper() for v in committed]


def test_admin_cluster_topics_and_configs(kafkajs, cluster):
    result = scenario(kafkajs[0], "admin")
    assert result["nodes"] == [{"id": i, "host": "127.0.0.1", "port": b.port} for i, b in cluster.brokers.items()]
    assert result["controller"] == cluster.controller_id()
    assert result["cluster_id"] == cluster.metadata(1).cluster_id
    assert result["created"] is True and result["created_again"] is False
    for p in result["described"]:
        assert sorted(p["replicas"]) == [1, 2, 3] and p["leader"] in p["isr"] and set(p["isr"]) <= {1, 2, 3}
    assert [p["partition"] for p in result["described"]] == [0, 1, 2]
    # [value, source (DescribeConfigs v1+: 1 dynamic topic, 4 static broker, 5 default), read-only, sensitive, default]
    topic_configs = result["topic_configs"]
    assert topic_configs["retention.ms"] == ["3600000", 1, False, False, False]
    assert topic_configs["min.insync.replicas"] == ["2", 1, False, False, False]
    assert topic_configs["cleanup.policy"] == ["delete", 5, False, False, True]
    assert result["broker_configs"]["broker.id"] == ["1", 4, True, False, False]
    altered = result["altered_configs"]
    assert altered["retention.ms"] == ["7200000", 1, False, False, False]
    assert altered["min.insync.replicas"] == ["1", 5, False, False, True]
    assert result["partitions_after_increase"] == [0, 1, 2, 3, 4]
    assert result["listed_before_delete"] is True


def test_producer_auto_creates_a_topic_through_a_non_controller(kafkajs):
    """A producer whose only bootstrap broker is not the controller sends to a topic nobody created:
    kafkajs asks that broker for the topic's metadata, which must create it and answer
    LEADER_NOT_AVAILABLE (kafkajs retries that one) as every Kafka broker does."""
    result = scenario(kafkajs[0], "autocreate")
    assert [(s["offset"], s["error"]) for s in result["sent"]] == [(0, 0)]
    assert "This server does not host this topic-partition" not in result["metadata_errors"]
