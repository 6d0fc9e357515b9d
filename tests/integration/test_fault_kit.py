"""The fault-injection kit against real clients (confluent-kafka), through the pytest plugin's
fauxka_cluster fixture: a client sees each injected fault and recovers once it is removed."""

import re
import subprocess
import sys
import time

import pytest

from fauxka.testing import FaultError
from tests.fault_kit_helpers import _produce, _topic


def test_retriable_partition_error_is_retried_through(fauxka_cluster):
    cluster = fauxka_cluster
    topic = _topic(cluster)
    fault = cluster.add_fault("error", api="produce", topic=topic, partition=0, error="NOT_LEADER_OR_FOLLOWER",
                              count=3)
    time.sleep(0.1)  # every broker applies it within 100 ms
    assert _produce(cluster, topic, 0) == [None]
    assert fault.id not in [f.id for f in cluster.list_faults()]  # all 3 hits taken: the client saw them


def test_fatal_partition_error_reaches_the_client_until_removed(fauxka_cluster):
    from confluent_kafka import KafkaError

    cluster = fauxka_cluster
    topic = _topic(cluster)
    with cluster.fault("error", api="produce", topic=topic, partition=1, error="TOPIC_AUTHORIZATION_FAILED"):
        time.sleep(0.1)
        [err] = _produce(cluster, topic, 1)
        assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        assert _produce(cluster, topic, 0) == [None]  # the other partition is served
    time.sleep(0.1)
    assert _produce(cluster, topic, 1) == [None]


def test_delay_and_close(fauxka_cluster):
    from confluent_kafka.admin import AdminClient

    cluster = fauxka_cluster
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.list_topics(timeout=10)
    with cluster.fault("delay", api="metadata", client_id="slow-app", delay_ms=800):
        time.sleep(0.1)
        slow = AdminClient({"bootstrap.servers": cluster.bootstrap, "client.id": "slow-app"})
        started = time.monotonic()
        slow.list_topics(timeout=10)
        assert time.monotonic() - started >= 0.8
        started = time.monotonic()
        admin.list_topics(timeout=10)  # another client id: not delayed
        assert time.monotonic() - started < 0.8
    topic = _topic(cluster)
    with cluster.fault("close", api="produce", topic=topic, count=2) as fault:
        time.sleep(0.1)
        assert _produce(cluster, topic, 0) == [None]  # the producer reconnected and retried
        assert fault.id not in [f.id for f in cluster.list_faults()]


def test_duration_bounds_a_fault(fauxka_cluster):
    cluster = fauxka_cluster
    topic = _topic(cluster)
    cluster.add_fault("error", api="produce", topic=topic, error="TOPIC_AUTHORIZATION_FAILED", duration_s=0.5)
    time.sleep(0.6)
    assert _produce(cluster, topic, 0) == [None]
    assert cluster.list_faults() == []


def test_bad_input_is_a_clear_error(fauxka_cluster):
    with pytest.raises(FaultError, match="unknown api"):
        fauxka_cluster.add_fault("error", api="no_such_api", error="NOT_COORDINATOR")
    with pytest.raises(FaultError, match="unknown error name"):
        fauxka_cluster.add_fault("error", api="produce", error="NOT_AN_ERROR")
    with pytest.raises(FaultError, match="no broker 9"):
        fauxka_cluster.add_fault("close", broker=9)


def test_command_line(fauxka_cluster):
    zk = ["--zookeeper", fauxka_cluster.zk_connect]

    def fauxka(*args):
        return subprocess.run([sys.executable, "-m", "fauxka", *args], capture_output=True, text=True, timeout=60)

    added = fauxka("fault", "add", "error", "--api", "produce", "--error", "NOT_LEADER_OR_FOLLOWER", "--count", "5", *zk)
    assert added.returncode == 0, added.stderr
    fault_id = added.stdout.strip()
    listed = fauxka("fault", "list", *zk)
    assert fault_id in listed.stdout and "NOT_LEADER_OR_FOLLOWER" in listed.stdout and "count=5" in listed.stdout
    bad = fauxka("fault", "add", "error", "--api", "produce", "--error", "BOGUS", *zk)
    assert bad.returncode == 2 and "unknown error name" in bad.stderr
    assert fauxka("fault", "clear", *zk).stdout.strip() == "removed 1 fault(s)"
    assert fauxka("fault", "list", *zk).stdout == "no faults in force\n"
    # a fault with a duration: its end as a time of day and how far off, not epoch milliseconds
    timed = fauxka("fault", "add", "delay", "--api", "produce", "--delay-ms", "5", "--duration", "600", *zk)
    assert timed.returncode == 0, timed.stderr
    line = fauxka("fault", "list", *zk).stdout
    assert re.fullmatch(rf"{timed.stdout.strip()}: delay 5 ms on api_key=0 until \d\d:\d\d:\d\d \(in (599|600) s\)\n",
                        line), line
    fauxka("fault", "clear", *zk)


def test_fault_add_leaves_hypothesis_unimported(fauxka_cluster):
    """kio registers test-data strategies on import when hypothesis is installed (half of `fault add`'s
    time, docs/numbers.md): the command, as fauxka's other processes, makes it unimportable."""
    added = subprocess.run([sys.executable, "-X", "importtime", "-m", "fauxka", "fault", "add", "error", "--api",
                            "produce", "--error", "NOT_LEADER_OR_FOLLOWER", "--count", "1",
                            "--zookeeper", fauxka_cluster.zk_connect], capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in added.stderr.splitlines() if line.startswith("import time:")]
    # kio tried `import hypothesis.strategies` (listed) and was refused: none of hypothesis itself loaded
    assert "kio.schema.errors" in imported and "hypothesis" not in imported and "hypothesis.core" not in imported
    fauxka_cluster.remove_fault(added.stdout.strip())


@pytest.mark.disruptive
def test_process_faults_through_the_state_file(fauxka_cluster_factory):
    cluster = fauxka_cluster_factory(brokers=2)
    cluster.pause(2)
    cluster.resume(2)
    cluster.kill(2)
    cluster.wait_for(lambda: cluster.registered() == {1}, 15, what="broker 2 deregistered")
    cluster.restart(2)
    assert cluster.registered() == {1, 2}
    with pytest.raises(Exception, match="no broker 7"):
        cluster.kill(7)


def test_leader_moves_to_a_given_replica_and_the_producer_follows(fauxka_cluster):
    cluster = fauxka_cluster
    topic, _, target, producer = _one_partition_led_and_an_acked_record(cluster)
    cluster.move_leader(topic, 0, target)
    assert cluster.list_faults() == []  # carried out, then removed
    assert _produce(cluster, topic, 0, producer=producer) == [None]  # it follows the leader to its new broker


def test_a_leadership_given_back_without_an_append_leaves_the_old_leader_replicating(fauxka_cluster):
    """Another replica leads for one epoch and appends nothing (that epoch starts at its log end),
    then the first leads again. Following it, the other one is told its last epoch diverges and
    truncates to its own log end: as Kafka's truncateTo, that must still drop the empty epoch, else
    every fetch diverges again, it never replicates, acks=all waits for it while it stays in the
    ISR, and electing it later loses what it missed (in a chaos run, an open transaction's state in
    __transaction_state: its abort markers were never written and a later commit showed it)."""
    from confluent_kafka import Consumer

    cluster = fauxka_cluster
    topic, first, other, producer = _one_partition_led_and_an_acked_record(cluster)
    cluster.move_leader(topic, 0, other)
    cluster.move_leader(topic, 0, first)
    assert _produce(cluster, topic, 0, producer=producer) == [None]  # every in-sync replica has it
    cluster.move_leader(topic, 0, other)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": cluster.unique_topic("g"),
                         "auto.offset.reset": "earliest", "enable.partition.eof": True})
    consumer.subscribe([topic])
    got = []
    try:
        def read_to_end():
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.offset())
            return msg is not None and msg.error() is not None and len(got) == 2
        cluster.wait_for(read_to_end, 30, what="both records read from the other replica as leader")
    finally:
        consumer.close()
    assert got == [0, 1]


def test_request_trace_shows_what_the_client_sent_and_the_errors(fauxka_cluster):
    cluster = fauxka_cluster
    topic = _topic(cluster)
    with cluster.tracing():
        with cluster.fault("error", api="produce", topic=topic, partition=0, error="NOT_LEADER_OR_FOLLOWER",
                           count=1) as fault:
            from confluent_kafka import Producer

            producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "client.id": "traced",
                                 "retry.backoff.ms": 50})
            producer.produce(topic, b"v", partition=0)
            assert producer.flush(20) == 0
    produces = cluster.trace(api="produce", client_id="traced")
    assert [e["errors"] for e in produces] == [[6], [0]]  # the injected error, then the retry's success
    assert produces[0]["fault"] == fault.id and produces[1]["fault"] is None
    assert all(e["partitions"] == [[topic, 0]] and e["version"] >= 3 for e in produces)
    out = subprocess.run([sys.executable, "-m", "fauxka", "trace", "show", "--data-dir", str(cluster.data_dir),
                          "--api", "produce", "--client-id", "traced"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.count("produce v") == 2 and f"fault={fault.id}" in out.stdout


def test_raw_requests_see_exact_codes_and_throttle(fauxka_cluster):
    from tests.data_helpers import batch, fetch, list_offset, produce

    cluster = fauxka_cluster
    topic = _topic(cluster)
    leader = cluster.address(cluster.leader(topic, 0))
    cluster.wait_for(lambda: produce(leader, topic, 0, batch([b"a"]))[0].error_code == 0, 10,
                     what="the leader serving the new partition")
    with cluster.fault("throttle", api="produce", topic=topic, throttle_ms=300):
        time.sleep(0.1)
        part, response = produce(leader, topic, 0, batch([b"b"]))
        assert part.error_code == 0 and response.throttle_time.total_seconds() == 0.3
    with cluster.fault("error", api="fetch", topic=topic, partition=0, error="KAFKA_STORAGE_ERROR"), \
            cluster.fault("error", api="list_offsets", versions="9", error="NOT_LEADER_OR_FOLLOWER"):
        time.sleep(0.1)
        got = fetch(leader, topic, 0, 0).responses[0].partitions[0]
        assert got.error_code == 56 and got.records is None
        assert list_offset(leader, topic, 0, -1).error_code == 6
        assert list_offset(leader, topic, 0, -1, version=8).error_code == 0  # outside the version range
    time.sleep(0.1)
    got = fetch(leader, topic, 0, 0).responses[0].partitions[0]
    assert got.error_code == 0 and got.records


def test_a_hung_request_times_out_and_the_client_recovers(fauxka_cluster):
    cluster = fauxka_cluster
    topic = _topic(cluster)
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "request.timeout.ms": 1500,
                         "retry.backoff.ms": 50})
    producer.produce(topic, b"warm", partition=0)
    assert producer.flush(20) == 0
    results = []
    with cluster.fault("hang", api="produce", topic=topic, duration_s=2.5):
        time.sleep(0.1)
        started = time.monotonic()
        producer.produce(topic, b"v", partition=0, on_delivery=lambda err, msg: results.append(err))
        producer.flush(30)
    assert results == [None] and time.monotonic() - started >= 1.5  # timed out at least once, then delivered


def test_kafka_python_commit_survives_not_coordinator(fauxka_cluster):
    from kafka import KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition

    cluster = fauxka_cluster
    topic, group = _topic(cluster, 1), cluster.unique_topic("g")
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap)
    for i in range(3):
        producer.send(topic, b"%d" % i, partition=0)
    producer.flush(20)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap, group_id=group, enable_auto_commit=False,
                             client_id="kp-commit")
    with cluster.tracing(), cluster.fault("error", api="offset_commit", client_id="kp-commit",
                                          error="NOT_COORDINATOR", count=2):
        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(3, "")})
    assert consumer.committed(TopicPartition(topic, 0)) == 3
    consumer.close()
    commits = cluster.trace(api="offset_commit", client_id="kp-commit")
    assert [e["errors"] for e in commits] == [[16], [16], [0]]


async def test_aiokafka_producer_sees_injected_errors_and_recovers(fauxka_cluster):
    import asyncio

    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import TopicAuthorizationFailedError

    cluster = fauxka_cluster
    topic = await asyncio.to_thread(_topic, cluster)
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", retry_backoff_ms=50)
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"warm", partition=0)
        fault = await asyncio.to_thread(cluster.add_fault, "error", api="produce", topic=topic,
                                        error="NOT_LEADER_OR_FOLLOWER", count=2)
        await asyncio.sleep(0.1)
        await producer.send_and_wait(topic, b"retried", partition=0)
        assert fault.id not in [f.id for f in await asyncio.to_thread(cluster.list_faults)]
        fault = await asyncio.to_thread(cluster.add_fault, "error", api="produce", topic=topic,
                                        error="TOPIC_AUTHORIZATION_FAILED")
        await asyncio.sleep(0.1)
        with pytest.raises(TopicAuthorizationFailedError):
            await producer.send_and_wait(topic, b"refused", partition=0)
        await asyncio.to_thread(cluster.remove_fault, fault.id)
        await asyncio.sleep(0.1)
        await producer.send_and_wait(topic, b"again", partition=0)
    finally:
        await producer.stop()


def test_every_broker_obeys_a_fault_once_add_fault_returns(fauxka_cluster):
    """add_fault / remove_fault return once every broker publishes that it obeys the change: the
    next request anywhere sees it (how fast that is: bench/fault_propagation.py, not a timed assertion)."""
    from tests.data_helpers import list_offset

    cluster = fauxka_cluster
    topic = _topic(cluster, 3)
    leaders = {cluster.address(cluster.leader(topic, p)): p for p in range(3)}
    # each leader serves once it has applied the leadership ZooKeeper shows (a watch later)
    cluster.wait_for(lambda: all(list_offset(a, topic, p, -1).error_code == 0 for a, p in leaders.items()), 10,
                     what="every leader serving")
    fault = cluster.add_fault("error", api="list_offsets", topic=topic, error="NOT_LEADER_OR_FOLLOWER")
    assert {a: list_offset(a, topic, p, -1).error_code for a, p in leaders.items()} == {a: 6 for a in leaders}
    cluster.remove_fault(fault.id)
    assert {a: list_offset(a, topic, p, -1).error_code for a, p in leaders.items()} == {a: 0 for a in leaders}


def test_coordinator_moves_and_the_group_follows(fauxka_cluster):
    from confluent_kafka import Consumer, TopicPartition

    cluster = fauxka_cluster
    topic, group = _topic(cluster, 1), cluster.unique_topic("g")
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
    offsets_partition = cluster._offsets_partition(group)
    cluster.wait_for(lambda: len(cluster.isr("__consumer_offsets", offsets_partition)) > 1, 20,
                     what="a second in-sync replica of the group's partition")
    first = cluster.coordinator(group)
    target = next(b for b in cluster.isr("__consumer_offsets", offsets_partition) if b != first)
    cluster.move_coordinator(group, target)
    assert cluster.coordinator(group) == target
    consumer.commit(offsets=[TopicPartition(topic, 0, 2)], asynchronous=False)  # found the new coordinator
    assert consumer.committed([TopicPartition(topic, 0)], timeout=10)[0].offset == 2
    consumer.close()


def test_shuffle_leaders_moves_every_partition_with_a_choice(fauxka_cluster):
    cluster = fauxka_cluster
    topic = _topic(cluster, 3, 2)
    before = {p: cluster.leader(topic, p) for p in range(3)}
    moved = cluster.shuffle_leaders(topic)
    assert set(moved) == {0, 1, 2} and all(moved[p] != before[p] for p in moved)
    assert _produce(cluster, topic, 1) == [None]


@pytest.mark.disruptive
def test_the_up_supervisor_outlives_a_killed_broker_and_watches_the_restarted_one(tmp_path):
    import json
    import os
    import signal

    from fauxka.ports import free_ports

    zk_port, base = free_ports(), free_ports(2)
    data_dir = tmp_path / "cluster"
    up = subprocess.Popen([sys.executable, "-m", "fauxka", "up", "--brokers", "2", "--data-dir", str(data_dir),
                           "--zookeeper-port", str(zk_port), "--base-port", str(base), "--metrics-base-port", "0"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def fauxka(*args):
        return subprocess.run([sys.executable, "-m", "fauxka", *args, "--data-dir", str(data_dir)],
                              capture_output=True, text=True, timeout=60)
    try:
        deadline = time.monotonic() + 60
        while "press Ctrl-C" not in up.stdout.readline():
            assert time.monotonic() < deadline and up.poll() is None, "up did not become ready"
        old = json.loads((data_dir / "cluster.json").read_text())["brokers"][1]["pid"]
        killed = fauxka("kill", "2")
        assert killed.returncode == 0 and "killed" in killed.stdout, killed.stderr
        time.sleep(0.6)  # the supervisor looks every 0.2 s
        assert up.poll() is None  # a broker killed on purpose does not stop the cluster
        restarted = fauxka("restart", "2")
        assert restarted.returncode == 0, restarted.stderr
        new = json.loads((data_dir / "cluster.json").read_text())["brokers"][1]["pid"]
        assert new != old
        zk_pid = json.loads((data_dir / "cluster.json").read_text())["zookeeper"]["pid"]
        again = fauxka("restart", "zookeeper")  # on its port and data: the brokers' sessions survive
        assert again.returncode == 0 and "ZooKeeper restarted" in again.stdout, again.stderr
        assert json.loads((data_dir / "cluster.json").read_text())["zookeeper"]["pid"] != zk_pid
        time.sleep(0.6)
        assert up.poll() is None  # nor does ZooKeeper stopped on purpose
        assert fauxka("pause", "9").returncode == 1
        assert fauxka("pause", "zookeper").returncode == 2  # neither a broker id nor zookeeper
        os.kill(new, signal.SIGKILL)  # a crash, not a fault: the supervisor stops the cluster
        up.wait(30)
        assert up.returncode == 1 and "broker 2" in up.stderr.read()
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGINT)
            up.wait(30)


def test_an_error_fault_on_describe_groups_answers_each_group(fauxka_cluster):
    """An api without partitions carries the error where Kafka's getErrorResponse puts it: per group."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    cluster = fauxka_cluster
    group = cluster.unique_topic("g")
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    with cluster.fault("error", api="describe_groups", error="GROUP_AUTHORIZATION_FAILED"):
        with pytest.raises(KafkaException) as raised:
            admin.describe_consumer_groups([group])[group].result(20)
        assert raised.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert admin.describe_consumer_groups([group])[group].result(20).group_id == group


def _one_partition_led_and_an_acked_record(cluster):
    """A 1-partition RF3 topic, its leader, another replica, and an acks=all producer whose first
    record is acknowledged."""
    from confluent_kafka import Producer

    topic = _topic(cluster, 1, 3)
    first = cluster.leader(topic, 0)
    other = next(b for b in cluster.broker_ids if b != first)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "retry.backoff.ms": 50})
    assert _produce(cluster, topic, 0, producer=producer) == [None]
    return topic, first, other, producer
