"""Consumer groups with real clients on the shared cluster (issue 12, "Done means"): join, get
partitions, commit, resume from committed offsets; two consumers split partitions; one leaving
hands its partitions over."""

import time

from tests.admin_helpers import create_topics, delete_topics, topic_spec, unique
from tests.harness import wait_for

PARTITIONS = 4


def _topic(cluster, partitions: int = PARTITIONS) -> str:
    name = unique("grp")
    [result] = create_topics(cluster.controller_address(), [topic_spec(name, partitions, 3)])
    assert int(result.error_code) == 0, result
    return name


def _produce(cluster, topic: str, count: int, partitions: int = PARTITIONS) -> None:
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(count):
        producer.produce(topic, f"v{i}".encode(), f"k{i}".encode(), partition=i % partitions)
    assert producer.flush(30) == 0


def _consumer(cluster, group: str, **extra):
    from confluent_kafka import Consumer
    return Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                     **extra})


def _poll_until(consumers, done, timeout_s: float = 40):
    got = {id(c): [] for c in consumers}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not done(got):
        for c in consumers:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                got[id(c)].append(msg)
    return got


def test_confluent_consumer_joins_commits_and_resumes(cluster):
    from confluent_kafka import TopicPartition
    topic, group = _topic(cluster), unique("g")
    _produce(cluster, topic, 40)
    c = _consumer(cluster, group)
    c.subscribe([topic])
    got = _poll_until([c], lambda g: sum(map(len, g.values())) >= 40)
    msgs = got[id(c)]
    assert len(msgs) == 40
    assert {m.partition() for m in msgs} == set(range(PARTITIONS))
    assert c.commit(asynchronous=False)
    committed = c.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
    assert sorted(tp.offset for tp in committed) == [10] * PARTITIONS
    c.close()
    _produce(cluster, topic, 8)
    again = _consumer(cluster, group)
    again.subscribe([topic])
    resumed = _poll_until([again], lambda g: sum(map(len, g.values())) >= 8, 30)[id(again)]
    assert len(resumed) == 8 and all(m.offset() >= 10 for m in resumed)
    again.close()


def test_two_confluent_consumers_split_and_one_leaving_hands_over(cluster):
    topic, group = _topic(cluster), unique("g")
    a = _consumer(cluster, group)
    b = _consumer(cluster, group)
    a.subscribe([topic])
    b.subscribe([topic])
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        a.poll(0.2)
        b.poll(0.2)
        if len(a.assignment()) + len(b.assignment()) == PARTITIONS and a.assignment() and b.assignment():
            break
    assert len(a.assignment()) == len(b.assignment()) == PARTITIONS // 2
    assert not {tp.partition for tp in a.assignment()} & {tp.partition for tp in b.assignment()}
    b.close()  # LeaveGroup: a gets every partition without waiting for the session timeout
    started = time.monotonic()
    while time.monotonic() - started < 20 and len(a.assignment()) != PARTITIONS:
        a.poll(0.2)
    assert len(a.assignment()) == PARTITIONS
    assert time.monotonic() - started < 6  # well within the session timeout
    a.close()


def test_kafka_python_group_consumer_commits(cluster):
    from kafka import KafkaConsumer, TopicPartition
    topic, group = _topic(cluster, 2), unique("g")
    _produce(cluster, topic, 10, 2)
    consumer = KafkaConsumer(topic, bootstrap_servers=cluster.bootstrap, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=20000)
    seen = []
    for msg in consumer:
        seen.append(msg)
        if len(seen) == 10:
            break
    assert len(seen) == 10
    consumer.commit()
    assert consumer.committed(TopicPartition(topic, 0)) == 5
    consumer.close()
    resumed = KafkaConsumer(bootstrap_servers=cluster.bootstrap, group_id=group, enable_auto_commit=False)
    assert resumed.committed(TopicPartition(topic, 1)) == 5
    resumed.close()


KILLED_CONSUMER = """
import sys, time
from confluent_kafka import Consumer
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "session.timeout.ms": 6000,
              "heartbeat.interval.ms": 500, "enable.auto.commit": False})
c.subscribe([sys.argv[3]])
while True:
    c.poll(0.2)
    if c.assignment():
        print("assigned", flush=True)
"""


def test_a_killed_consumers_partitions_move_within_the_session_timeout(cluster):
    import signal
    import subprocess
    import sys
    topic, group = _topic(cluster), unique("g")
    victim = subprocess.Popen([sys.executable, "-c", KILLED_CONSUMER, cluster.bootstrap, group, topic],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout.readline().strip() == "assigned"
        survivor = _consumer(cluster, group)
        survivor.subscribe([topic])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(survivor.assignment()) != PARTITIONS // 2:
            survivor.poll(0.2)
        assert len(survivor.assignment()) == PARTITIONS // 2
        victim.send_signal(signal.SIGKILL)  # no LeaveGroup: the coordinator notices the silent session
        killed = time.monotonic()
        while time.monotonic() - killed < 20 and len(survivor.assignment()) != PARTITIONS:
            survivor.poll(0.2)
        assert len(survivor.assignment()) == PARTITIONS
        assert 5 < time.monotonic() - killed < 6 + 4  # the 6 s session timeout, plus a heartbeat and a rejoin
        survivor.close()
    finally:
        victim.kill()
        victim.wait(5)


def test_deleting_a_topic_removes_its_committed_offsets(cluster):
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient
    topic, group = _topic(cluster, 1), unique("g")
    c = _consumer(cluster, group)
    c.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False)
    c.close()
    delete_topics(cluster.controller_address(), [topic])
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})

    def gone() -> bool:
        listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(10)
        return not listed.topic_partitions
    wait_for(gone, 15, 0.2, "the deleted topic's offsets removed")


def test_describe_configs_of_a_group_resource_is_refused_as_kafka_3_9_zk(cluster):
    """ConfigHelper.handleDescribeConfigsRequest: GROUP (32) is an unexpected resource type there:
    InvalidRequestException, so every resource of the request answers INVALID_REQUEST."""
    from tests.admin_helpers import send
    answer = send(cluster.controller_address(), 32, 4, {
        "resources": [{"resource_type": 32, "resource_name": "some-group", "configuration_keys": None}],
        "include_synonyms": False, "include_documentation": False})
    [result] = answer.results
    assert result.error_code == 42 and result.resource_type == 32
