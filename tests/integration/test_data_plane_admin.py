"""OffsetForLeaderEpoch, DeleteRecords, DescribeLogDirs and the data plane's metrics on the
shared cluster, through fauxka's own client."""

import urllib.request

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.data_helpers import batch, fetch, leader_of, list_offset, produce
from tests.harness import wait_for


def _topic(cluster) -> tuple[str, int, str]:
    name = unique("adm")
    [result] = create_topics(cluster.controller_address(), [topic_spec(name, 1, 3)])
    assert int(result.error_code) == 0, result
    leader = leader_of(cluster, name)
    address = cluster.address_of(leader)
    wait_for(lambda: int(produce(address, name, 0, batch([b"first"]), acks=1)[0].error_code) == 0, 10,
             what="the leader takes writes")
    return name, leader, address


def test_offset_for_leader_epoch(cluster):
    topic, _, leader = _topic(cluster)
    produce(leader, topic, 0, batch([b"a", b"b"]))
    response = send(leader, 23, 4, {"replica_id": -1, "topics": [{"topic": topic, "partitions": [
        {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]})
    part = response.topics[0].partitions[0]
    assert (int(part.error_code), part.leader_epoch, part.end_offset) == (0, 0, 3)
    fenced = send(leader, 23, 2, {"topics": [{"topic": topic, "partitions": [
        {"partition": 0, "current_leader_epoch": 9, "leader_epoch": 0}]}]})
    assert int(fenced.topics[0].partitions[0].error_code) == 75  # UNKNOWN_LEADER_EPOCH


def test_delete_records_moves_the_log_start(cluster):
    topic, _, leader = _topic(cluster)
    produce(leader, topic, 0, batch([b"a", b"b", b"c"]))  # offsets 1-3 after "first"
    response = send(leader, 21, 2, {"timeout": 10000, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0, "offset": 2}]}]})
    part = response.topics[0].partitions[0]
    assert (int(part.error_code), part.low_watermark) == (0, 2)
    assert list_offset(leader, topic, 0, -2).offset == 2
    assert int(fetch(leader, topic, 0, 0).responses[0].partitions[0].error_code) == 1  # OFFSET_OUT_OF_RANGE
    beyond = send(leader, 21, 2, {"timeout": 10000, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0, "offset": 99}]}]})
    assert int(beyond.topics[0].partitions[0].error_code) == 1


def test_describe_log_dirs_lists_the_replicas_here(cluster):
    topic, leader_id, leader = _topic(cluster)
    response = send(leader, 35, 4, {"topics": [{"topic": topic, "partitions": [0]}]})
    assert int(response.error_code) == 0
    [result] = response.results
    assert result.log_dir.endswith(f"data-{leader_id}") and result.total_bytes > 0
    [entry] = result.topics
    assert entry.name == topic and entry.partitions[0].partition_size > 0


def test_metrics_count_bytes_messages_and_log_end_offsets(cluster):
    topic, leader_id, leader = _topic(cluster)
    produce(leader, topic, 0, batch([b"m"] * 10))
    fetch(leader, topic, 0, 0)
    port = cluster.brokers[leader_id].metrics_port
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    lines = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
             if line and not line.startswith("#")}
    assert lines[f'kafka_server_brokertopicmetrics_messagesin_total{{topic="{topic}"}}'] == 11
    assert lines[f'kafka_server_brokertopicmetrics_bytesin_total{{topic="{topic}"}}'] > 0
    assert lines[f'kafka_server_brokertopicmetrics_bytesout_total{{topic="{topic}"}}'] > 0
    assert lines[f'kafka_log_log_logendoffset{{partition="0",topic="{topic}"}}'] == 11
    assert "kafka_server_replicamanager_underreplicatedpartitions" in lines
    assert "kafka_server_replicamanager_isrshrinks_total" in text


def test_deleting_a_topic_deletes_its_logs_on_every_replica(cluster):
    from tests.admin_helpers import delete_topics

    topic, _, leader = _topic(cluster)
    dirs = [b.work_dir / f"data-{i}" / f"{topic}-0" for i, b in cluster.brokers.items()]
    wait_for(lambda: all(d.is_dir() for d in dirs), 10, what="a log on each replica")
    [deleted] = delete_topics(cluster.controller_address(), [topic])
    assert int(deleted.error_code) == 0
    wait_for(lambda: not any(d.exists() for d in dirs), 15, what="the logs deleted")


def test_errors_per_sec_counts_each_partitions_error(cluster):
    """Kafka's ErrorsPerSec counts the error codes of a Produce's partitions, not its (absent) top-level one:
    a follower asked to append answers NOT_LEADER_OR_FOLLOWER, counted there."""
    topic, leader_id, _ = _topic(cluster)
    follower = next(b for b in cluster.brokers if b != leader_id)
    port = cluster.brokers[follower].metrics_port

    def not_leader() -> float:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
        line = 'kafka_network_requestmetrics_errors_total{error="NOT_LEADER_OR_FOLLOWER",request="Produce"} '
        return next((float(l.split()[-1]) for l in text.splitlines() if l.startswith(line)), 0.0)

    before = not_leader()
    answer, _ = produce(cluster.address_of(follower), topic, 0, batch([b"x"]), acks=1)
    assert int(answer.error_code) == 6  # NOT_LEADER_OR_FOLLOWER
    assert not_leader() == before + 1
