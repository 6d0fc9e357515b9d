"""AlterReplicaLogDirs across several log.dirs (KIP-113), through kafka-python's admin client:
a replica moves to another dir of its broker under a running acks=all producer, DescribeLogDirs
shows the new place, every acknowledged record is read back (before and after a restart), and
bad input gets Kafka's codes. Its own 2-broker cluster, each broker with two log dirs.
"""

import os

import pytest

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.harness import wait_for
from tests.integration.test_reassignment import RunningProducer, consumed


def replica_dir(admin, broker_id: int, topic: str) -> list[str]:
    """The log dirs DescribeLogDirs names for the topic's partition 0 on one broker."""
    (described,) = admin.describe_log_dirs({topic: [0]}, brokers=[broker_id])
    return [d["log_dir"] for d in described["log_dirs"]
            if any(t["name"] == topic and t["partitions"] for t in d["topics"])]


@pytest.mark.disruptive
def test_a_replica_moves_to_another_log_dir_under_an_acks_all_producer(make_cluster, tmp_path):
    from kafka.admin import KafkaAdminClient
    from kafka.errors import LogDirNotFoundError, NoError, ReplicaNotAvailableError, UnknownTopicOrPartitionError

    cluster = make_cluster(2, start=False)
    dirs = {b: [str(tmp_path / f"b{b}-a"), str(tmp_path / f"b{b}-b")] for b in cluster.brokers}
    for b, broker in cluster.brokers.items():  # each broker its own two dirs (the last key wins)
        broker.config.write_text(broker.config.read_text() + f"log.dirs={','.join(dirs[b])}\n")
    cluster.start()
    topic, elsewhere = unique("dirs"), unique("dirs-other")
    results = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: [1]}),
                                                           topic_spec(elsewhere, assignments={0: [2]})])
    assert [int(r.error_code) for r in results] == [0, 0]
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    try:
        wait_for(lambda: replica_dir(admin, 1, topic), 20, what="the replica described")
        (before,) = replica_dir(admin, 1, topic)
        target = next(d for d in dirs[1] if d != before)
        with RunningProducer(cluster.bootstrap, topic) as producer:
            wait_for(lambda: len(producer.acked) > 300, 30, what="records acknowledged")
            assert admin.alter_replica_log_dirs({(topic, 0, 1): target}) == {_tpr(topic, 0, 1): NoError}
            moved_at = len(producer.acked)
            wait_for(lambda: len(producer.acked) > moved_at + 300, 30, what="records after the move")
        assert producer.failed == []
        assert replica_dir(admin, 1, topic) == [target]
        assert not os.path.exists(os.path.join(before, f"{topic}-0"))
        assert os.path.isdir(os.path.join(target, f"{topic}-0"))
        assert producer.acked <= set(consumed(cluster.bootstrap, topic, len(producer.acked)))
        # the same dir again: nothing to do
        assert admin.alter_replica_log_dirs({(topic, 0, 1): target}) == {_tpr(topic, 0, 1): NoError}
        # bad input
        nothing = unique("nothing")
        got = admin.alter_replica_log_dirs({
            (topic, 0, 1): str(tmp_path / "no-such-dir"),
            (elsewhere, 0, 1): dirs[1][0],  # a replica broker 1 does not hold
            (nothing, 0, 1): dirs[1][0],
            (topic, 0, 2): dirs[1][0],  # broker 1's dir named to broker 2
        })
        assert got == {_tpr(topic, 0, 1): LogDirNotFoundError, _tpr(elsewhere, 0, 1): ReplicaNotAvailableError,
                       _tpr(nothing, 0, 1): UnknownTopicOrPartitionError, _tpr(topic, 0, 2): LogDirNotFoundError}
        # a trailing slash is another path to Kafka (File.getAbsolutePath is compared as a string)
        raw = send(cluster.address_of(1), 34, 2, {"dirs": [{"path": target + "/", "topics": [
            {"name": topic, "partitions": [0]}]}]})
        assert [(t.topic_name, [(p.partition_index, int(p.error_code)) for p in t.partitions])
                for t in raw.results] == [(topic, [(0, 57)])]
        # acknowledged records survive a restart from the new place
        cluster.brokers[1].stop()
        cluster.brokers[1].start()
        cluster.wait_ready()
        # kafka-python's admin keeps the metadata it read while broker 1 was down (no broker 1:
        # UnknownBrokerIdError) until metadata.max.age.ms (5 min); a new admin client reads it afresh
        admin.close()
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
        wait_for(lambda: replica_dir(admin, 1, topic) == [target], 30, what="the replica described after restart")
        assert producer.acked <= set(consumed(cluster.bootstrap, topic, len(producer.acked)))
    finally:
        admin.close()


def _tpr(topic: str, partition: int, broker: int):
    from kafka.structs import TopicPartitionReplica

    return TopicPartitionReplica(topic, partition, broker)
