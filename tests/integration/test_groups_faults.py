"""Group coordinator faults, each on its own cluster (issue 12): a killed coordinator loses no
acknowledged commit and clients find the new one; a whole-cluster restart brings groups and
offsets back (both replayed from __consumer_offsets)."""

import signal
import time

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.harness import wait_for

OVERRIDES = {"offsets.topic.num.partitions": "3"}


def _setup(cluster, partitions: int = 2) -> tuple[str, str]:
    topic, group = unique("gf"), unique("g")
    [result] = create_topics(cluster.controller_address(), [topic_spec(topic, partitions, 3)])
    assert int(result.error_code) == 0, result
    return topic, group


def _consumer(cluster, group: str):
    from confluent_kafka import Consumer
    return Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False})


def _coordinator(cluster, group: str) -> int:
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    [future] = admin.describe_consumer_groups([group], request_timeout=10).values()
    return future.result().coordinator.id


def _committed(cluster, group: str, topic: str, partitions: int = 2) -> list[int]:
    from confluent_kafka import TopicPartition
    c = _consumer(cluster, group)
    try:
        return [tp.offset for tp in c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=30)]
    finally:
        c.close()


def test_killing_the_coordinator_loses_no_acknowledged_commit(make_cluster):
    from confluent_kafka import KafkaException, TopicPartition
    cluster = make_cluster(3, OVERRIDES)
    topic, group = _setup(cluster)
    c = _consumer(cluster, group)
    acknowledged = 0
    for offset in range(1, 21):
        c.commit(offsets=[TopicPartition(topic, p, offset) for p in range(2)], asynchronous=False)
        acknowledged = offset
    victim = _coordinator(cluster, group)
    cluster.brokers[victim].signal(signal.SIGKILL)
    deadline = time.monotonic() + 60
    after = 0
    while after < 10 and time.monotonic() < deadline:
        try:
            c.commit(offsets=[TopicPartition(topic, p, acknowledged + 1) for p in range(2)], asynchronous=False)
        except KafkaException:
            time.sleep(0.2)  # the coordinator is moving; the client finds the new one
            continue
        acknowledged += 1
        after += 1
    c.close()
    assert after == 10, "commits never resumed on a new coordinator"
    assert _coordinator(cluster, group) != victim
    assert _committed(cluster, group, topic) == [acknowledged, acknowledged]


def test_a_full_restart_brings_groups_and_offsets_back(make_cluster):
    from confluent_kafka import TopicPartition
    cluster = make_cluster(3, OVERRIDES)
    topic, group = _setup(cluster)
    c = _consumer(cluster, group)
    c.commit(offsets=[TopicPartition(topic, 0, 7), TopicPartition(topic, 1, 9)], asynchronous=False)
    c.close()
    for broker in cluster.brokers.values():
        broker.stop()
    for broker in cluster.brokers.values():
        broker.start()
    cluster.wait_ready(60)
    wait_for(lambda: _committed(cluster, group, topic) == [7, 9], 60, 0.5, "offsets after the restart")


def test_a_commit_still_being_replicated_is_unstable_for_a_read_committed_consumer(make_cluster):
    """GroupMetadataManager.getOffsets(requireStable): while an acks=all OffsetCommit waits for a
    paused in-sync follower, an OffsetFetch with require_stable (a read_committed consumer's) is
    answered UNSTABLE_OFFSET_COMMIT for that partition, one without it the offset still committed;
    librdkafka asks again until the commit is done, so it gets the new offset, never the one the
    commit is replacing."""
    from confluent_kafka import Consumer, TopicPartition
    # the paused follower keeps its ZooKeeper session (else the controller takes it out of the ISR at
    # once); replica.lag.time.max.ms holds the commit long enough to see it pending, and the commit
    # waits for that (offsets.commit.timeout.ms, else it fails at 5 s and 5 stays committed)
    cluster = make_cluster(3, {**OVERRIDES, "replica.lag.time.max.ms": "15000",
                               "zookeeper.session.timeout.ms": "30000", "offsets.commit.timeout.ms": "60000"})
    topic, group = _setup(cluster, 1)
    committer = _consumer(cluster, group)
    committer.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)
    coordinator = _coordinator(cluster, group)
    paused = next(b for b in cluster.brokers if b not in (coordinator, cluster.controller_id()))

    def fetch(require_stable: bool):
        answer = send(cluster.address_of(coordinator), 9, 7, {
            "group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}],
            "require_stable": require_stable})
        part = answer.topics[0].partitions[0]
        return int(part.error_code), int(part.committed_offset)
    reader = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False,
                       "isolation.level": "read_committed"})
    assert reader.committed([TopicPartition(topic, 0)], timeout=30)[0].offset == 5
    cluster.brokers[paused].signal(signal.SIGSTOP)
    try:
        committer.commit(offsets=[TopicPartition(topic, 0, 9)], asynchronous=True)
        committer.poll(0.1)
        wait_for(lambda: fetch(True) == (88, -1), 15, 0.1, "UNSTABLE_OFFSET_COMMIT while the commit is pending")
        assert fetch(False) == (0, 5)  # without require_stable: what is committed so far
        assert reader.committed([TopicPartition(topic, 0)], timeout=60)[0].offset == 9
    finally:
        cluster.brokers[paused].signal(signal.SIGCONT)
    reader.close()
    committer.close()
