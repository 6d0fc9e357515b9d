"""Admin apis for groups with real clients (issue 12): list, describe, alter and list offsets,
delete groups; the group metrics and consumer lag; static membership; aiokafka and kcat -G."""

import shutil
import subprocess
import time
import urllib.request

import pytest

from tests.admin_helpers import create_topics, topic_spec, unique
from tests.harness import wait_for


def _topic(cluster, partitions: int = 2) -> str:
    name = unique("ga")
    [result] = create_topics(cluster.controller_address(), [topic_spec(name, partitions, 3)])
    assert int(result.error_code) == 0, result
    return name


def _admin(cluster):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": cluster.bootstrap})


def _stable_consumer(cluster, group: str, topic: str, **extra):
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", **extra})
    c.subscribe([topic])
    deadline = time.monotonic() + 30
    while not c.assignment() and time.monotonic() < deadline:
        c.poll(0.2)
    assert c.assignment()
    return c


def test_list_describe_alter_and_delete_groups(cluster):
    from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, TopicPartition
    topic, group, simple = _topic(cluster), unique("g"), unique("simple")
    admin = _admin(cluster)
    alter = admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(simple, [TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 4)])])
    alter[simple].result(30)
    listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(simple)])[simple].result(30)
    assert sorted((tp.partition, tp.offset) for tp in listed.topic_partitions) == [(0, 3), (1, 4)]
    c = _stable_consumer(cluster, group, topic)
    listing = admin.list_consumer_groups(request_timeout=10).result()
    states = {g.group_id: g.state for g in listing.valid}
    assert states[group] == ConsumerGroupState.STABLE and states[simple] == ConsumerGroupState.EMPTY
    only_stable = admin.list_consumer_groups(request_timeout=10, states={ConsumerGroupState.STABLE}).result()
    assert group in {g.group_id for g in only_stable.valid} and simple not in {g.group_id for g in only_stable.valid}
    # ListGroups v5 (librdkafka's 0081 asserts it): every group is classic; a filter of "consumer"
    # groups (KIP-848's, which ZooKeeper mode has none of) lists none
    from confluent_kafka import ConsumerGroupType
    assert {g.group_id: g.type for g in listing.valid}[group] == ConsumerGroupType.CLASSIC
    classic = admin.list_consumer_groups(request_timeout=10, types={ConsumerGroupType.CLASSIC}).result()
    assert {group, simple} <= {g.group_id for g in classic.valid}
    assert admin.list_consumer_groups(request_timeout=10, types={ConsumerGroupType.CONSUMER}).result().valid == []
    described = admin.describe_consumer_groups([group], request_timeout=10)[group].result()
    assert described.state == ConsumerGroupState.STABLE and described.partition_assignor == "range"
    [member] = described.members
    assert sorted(tp.partition for tp in member.assignment.topic_partitions) == [0, 1]
    with pytest.raises(Exception, match="NON_EMPTY_GROUP|not empty"):
        admin.delete_consumer_groups([group], request_timeout=10)[group].result()
    c.close()
    admin.delete_consumer_groups([group, simple], request_timeout=10)[simple].result()
    wait_for(lambda: not {group, simple} & {g.group_id for g in admin.list_consumer_groups().result().valid},
             10, 0.2, "deleted groups gone")
    after = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(simple)])[simple].result(30)
    assert after.topic_partitions == [] or all(tp.offset < 0 for tp in after.topic_partitions)


def test_group_metrics_and_consumer_lag(cluster):
    from confluent_kafka import Producer, TopicPartition
    topic, group = _topic(cluster, 1), unique("g")
    producer = Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(10):
        producer.produce(topic, b"x", partition=0)
    producer.flush(30)
    c = _stable_consumer(cluster, group, topic)
    c.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
    admin = _admin(cluster)  # kept alive until its future resolves
    coordinator = admin.describe_consumer_groups([group], request_timeout=10)[group].result().coordinator.id
    port = cluster.brokers[coordinator].metrics_port
    def scrape() -> str:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    lag = f'fauxka_consumer_lag{{group="{group}",partition="0",topic="{topic}"}} 6.0'
    wait_for(lambda: lag in scrape(), 10, 0.2, "the lag (a follower replica learns the high watermark late)")
    text = scrape()
    assert f'fauxka_group_members{{group="{group}"}} 1.0' in text
    assert "kafka_coordinator_group_groupmetadatamanager_numgroupsstable" in text and "fauxka_group_offset_commits_total" in text
    c.close()


def _rebalances(port: int) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return float(next(line.split()[1] for line in text.splitlines()
                      if line.startswith("fauxka_group_rebalances_total")))


def test_static_member_restart_causes_no_rebalance(cluster):
    topic, group = _topic(cluster), unique("g")
    first = _stable_consumer(cluster, group, topic, **{"group.instance.id": "static-1", "session.timeout.ms": 10000})
    admin = _admin(cluster)
    before = admin.describe_consumer_groups([group])[group].result()
    first.close()  # a static member does not send LeaveGroup: the group stays Stable
    after_close = admin.describe_consumer_groups([group])[group].result()
    assert len(after_close.members) == 1
    port = cluster.brokers[before.coordinator.id].metrics_port
    rebalances = _rebalances(port)
    second = _stable_consumer(cluster, group, topic, **{"group.instance.id": "static-1", "session.timeout.ms": 10000})
    assert _rebalances(port) == rebalances  # KIP-345: the same assignment handed back, no rebalance
    after = admin.describe_consumer_groups([group])[group].result()
    assert after.members[0].group_instance_id == "static-1"
    assert after.members[0].member_id != before.members[0].member_id
    second.close()


def test_aiokafka_group_consumer(cluster):
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    topic, group = _topic(cluster, 1), unique("g")

    async def body():
        producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap)
        await producer.start()
        for i in range(5):
            await producer.send_and_wait(topic, f"m{i}".encode(), partition=0)
        await producer.stop()
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=cluster.bootstrap, group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            got = []
            async with asyncio.timeout(30):
                while len(got) < 5:
                    batch = await consumer.getmany(timeout_ms=500)
                    for msgs in batch.values():
                        got.extend(msgs)
            await consumer.commit()
            assert await consumer.committed(TopicPartition(topic, 0)) == 5
        finally:
            await consumer.stop()
    asyncio.run(body())


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat not installed")
def test_kcat_balanced_consumer(cluster):
    from confluent_kafka import Producer
    topic, group = _topic(cluster, 1), unique("g")
    producer = Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(3):
        producer.produce(topic, f"kc{i}".encode(), partition=0)
    producer.flush(30)
    out = subprocess.run(["kcat", "-b", cluster.bootstrap, "-G", group, "-o", "beginning", "-c", "3", "-e",
                          "-X", "enable.partition.eof=true", topic], capture_output=True, timeout=60, text=True)
    assert out.stdout.split() == ["kc0", "kc1", "kc2"], out.stderr


def test_kafka_python_admin_alters_deletes_offsets_and_removes_members(cluster):
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient, MemberToRemove
    from kafka.errors import (CoordinatorNotAvailableError, GroupSubscribedToTopicError, NoError,
                              UnknownTopicOrPartitionError)
    from kafka.structs import OffsetAndMetadata
    topic, group = _topic(cluster), unique("g")
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    try:
        def alter() -> bool:  # Kafka too answers COORDINATOR_NOT_AVAILABLE while __consumer_offsets is created
            try:
                errors = admin.alter_group_offsets(group, {TopicPartition(topic, 0): OffsetAndMetadata(5, "m", -1),
                                                           TopicPartition(topic, 1): OffsetAndMetadata(6, "", -1)})
            except CoordinatorNotAvailableError:
                return False
            # per partition, not raised: UNKNOWN_TOPIC_OR_PARTITION until the coordinator's cache
            # has the topic just created (Kafka's too); anything else is a failure
            assert set(errors.values()) <= {NoError, UnknownTopicOrPartitionError}, errors
            return set(errors.values()) == {NoError}
        wait_for(alter, 30, 0.5, "the group's coordinator")
        offsets = admin.list_group_offsets({group: None, "other-" + group: None})[group]  # OffsetFetch v8: 2 groups
        assert {tp.partition: o.offset for tp, o in offsets.items()} == {0: 5, 1: 6}
        assert offsets[TopicPartition(topic, 0)].metadata == "m"
        deleted = admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
        assert deleted == {TopicPartition(topic, 0): NoError}
        assert {tp.partition for tp in admin.list_group_offsets(group)[group]} == {1}
        c = _stable_consumer(cluster, group, topic, **{"group.instance.id": "kp-static"})
        refused = admin.delete_group_offsets(group, [TopicPartition(topic, 1)])
        assert refused == {TopicPartition(topic, 1): GroupSubscribedToTopicError}
        admin.remove_group_members(group, [MemberToRemove(group_instance_id="kp-static")])
        wait_for(lambda: admin.describe_groups([group])[group]["group_state"] in ("Empty", "PreparingRebalance"),
                 10, 0.2, "the static member removed")
        c.close()
    finally:
        admin.close()
