"""Partition reassignments (KIP-455): AlterPartitionReassignments and ListPartitionReassignments
through kafka-python's admin client, the exact codes and messages through fauxka's own client.

The disruptive tests start their own clusters (fauxka.testing): a reassignment under a running
acks=all producer, one held in progress by a replication fault (listed, cancelled, resumed by a
new controller), and one whose new replica must then serve every acknowledged record alone.
"""

import threading
import time

import pytest

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.fault_kit_helpers import LAGGY, _topic
from tests.harness import wait_for

NOT_ALIVE = ("Replica assignment has brokers that are not alive. Replica list: ArrayBuffer(9), "
             "live broker list: Set(1, 2, 3)")


def admin_client(bootstrap: str):
    from kafka.admin import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)


def alter(address: str, moves: list[tuple[str, int, list[int] | None]]):
    """AlterPartitionReassignments v0 as written: the whole response."""
    topics: dict[str, list] = {}
    for topic, partition, replicas in moves:
        topics.setdefault(topic, []).append({"partition_index": partition, "replicas": replicas})
    return send(address, 45, 0, {"timeout": 30000, "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})


def outcomes(response) -> dict[tuple[str, int], tuple[int, str | None]]:
    return {(t.name, p.partition_index): (int(p.error_code), p.error_message)
            for t in response.responses for p in t.partitions}


def listing(address: str, topics: dict[str, list[int]] | None):
    return send(address, 46, 0, {"timeout": 30000, "topics": None if topics is None else [
        {"name": t, "partition_indexes": ps} for t, ps in topics.items()]})


def replicas_seen(address: str, topic: str) -> dict[int, tuple[list[int], list[int], int]]:
    """Metadata v12 from one broker: partition -> (replicas, ISR sorted, leader)."""
    response = send(address, 3, 12, {"topics": [{"name": topic, "topic_id": None}], "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": False}, timeout_s=5)
    (t,) = response.topics
    return {p.partition_index: (list(p.replica_nodes), sorted(p.isr_nodes), p.leader_id) for p in t.partitions}


# --- bad input and the listing, on the shared cluster ---------------------------------------------------


def test_bad_reassignments_get_kafkas_errors_and_messages(cluster):
    topic = unique("reassign-bad")
    (created,) = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: [1, 2]})])
    assert int(created.error_code) == 0
    for address in (cluster.controller_address(), cluster.non_controller_address()):  # forwarded too
        got = outcomes(alter(address, [(topic, 0, [9]), (topic, 0, [2, 9])]))  # the last entry wins
        assert got == {(topic, 0): (39, NOT_ALIVE)}
        got = outcomes(alter(address, [
            (topic, 0, []), (topic, 1, [1, 1]), (topic, 2, [-1]), ("no-such-topic-" + topic, 0, [1, 2]),
            (topic, 7, None), (topic, 3, [9])]))
        assert got == {
            (topic, 0): (39, "Empty replica list specified in partition reassignment."),
            (topic, 1): (39, "Duplicate replica ids in partition reassignment replica list: ArrayBuffer(1, 1)"),
            (topic, 2): (39, "Invalid broker id in replica list: ArrayBuffer(-1)"),
            ("no-such-topic-" + topic, 0): (3, "The partition does not exist."),
            (topic, 7): (85, "No partition reassignment is in progress."),
            (topic, 3): (39, NOT_ALIVE),  # an unknown partition: the brokers are checked first
        }
        got = outcomes(alter(address, [(topic, 0, None)]))
        assert got == {(topic, 0): (85, "No partition reassignment is in progress.")}
        response = listing(address, None)
        assert (int(response.error_code), response.error_message) == (0, None)
        assert all(t.name != topic for t in response.topics)
        assert list(listing(address, {topic: [0, 5]}).topics) == []


def test_kafka_python_reassigns_on_the_shared_cluster_and_lists_nothing_after(cluster):
    from kafka import TopicPartition
    from kafka.errors import InvalidReplicationAssignmentError, NoReassignmentInProgressError

    topic = unique("reassign-kp")
    (created,) = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: [1, 2], 1: [2, 3]})])
    assert int(created.error_code) == 0
    admin = admin_client(cluster.bootstrap)
    try:
        tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
        assert admin.alter_partition_reassignments({tp0: [3, 1], tp1: [9]}) == \
            {tp0: None, tp1: InvalidReplicationAssignmentError}
        for broker_id in cluster.brokers:
            wait_for(lambda b=broker_id: replicas_seen(cluster.address_of(b), topic)[0][:2] == ([3, 1], [1, 3]),
                     30, what=f"partition 0 on [3, 1] at broker {broker_id}")
        wait_for(lambda: admin.list_partition_reassignments().get(tp0) is None, 30, what="no reassignment listed")
        assert admin.list_partition_reassignments([tp0, tp1]) == {}
        assert admin.alter_partition_reassignments({tp0: None}) == {tp0: NoReassignmentInProgressError}
    finally:
        admin.close()


# --- the controller carrying reassignments out: private clusters --------------------------------------------


class RunningProducer:
    """confluent-kafka, acks=all and idempotent, sending numbered records until stopped; the
    numbers the brokers acknowledged."""

    def __init__(self, bootstrap: str, topic: str):
        from confluent_kafka import Producer

        self.topic = topic
        self.acked: set[int] = set()
        self.failed: list[str] = []
        self._producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                                   "linger.ms": 5, "retry.backoff.ms": 50})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, err, msg) -> None:
        if err is None:
            self.acked.add(int(msg.value()))
        else:
            self.failed.append(str(err))

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            try:
                self._producer.produce(self.topic, str(n).encode(), partition=0, on_delivery=self._delivered)
                n += 1
            except BufferError:
                pass
            self._producer.poll(0.01)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(30)
        assert self._producer.flush(60) == 0


def consumed(bootstrap: str, topic: str, expected: int) -> list[int]:
    """Every record of partition 0 from the beginning, read by confluent-kafka until end of partition."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("g"), "enable.auto.commit": False,
                         "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[int] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(1)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == -191 and len(values) >= expected:  # _PARTITION_EOF
                    break
                continue
            values.append(int(msg.value()))
    finally:
        consumer.close()
    return values


@pytest.mark.disruptive
def test_replicas_move_from_1_2_to_2_3_under_an_acks_all_producer(fauxka_cluster_factory):
    from kafka import TopicPartition

    cluster = fauxka_cluster_factory(brokers=3)
    topic = _topic(cluster, assignment=[[1, 2]])
    admin = admin_client(cluster.bootstrap)
    tp = TopicPartition(topic, 0)
    try:
        with RunningProducer(cluster.bootstrap, topic) as producer:
            cluster.wait_for(lambda: len(producer.acked) > 200, 30, what="records acknowledged")
            epoch = cluster.partition_state(topic, 0)["leader_epoch"]
            assert admin.alter_partition_reassignments({tp: [2, 3]}) == {tp: None}
            cluster.wait_for(lambda: not admin.list_partition_reassignments([tp]), 60, what="reassignment done")
            acked_at_move = len(producer.acked)
            cluster.wait_for(lambda: len(producer.acked) > acked_at_move + 200, 30, what="records after the move")
        assert producer.failed == []
        for broker_id in cluster.broker_ids:
            assert replicas_seen(cluster.address(broker_id), topic)[0][:2] == ([2, 3], [2, 3])
        state = cluster.partition_state(topic, 0)
        assert state["leader"] == 2 and state["leader_epoch"] > epoch  # 1 led; the leadership moved to 2
        # the new replica alone serves every acknowledged record
        cluster.terminate(2)
        cluster.wait_for(lambda: cluster.leader(topic, 0) == 3, 30, what="broker 3 leading")
        values = consumed(cluster.bootstrap, topic, len(producer.acked))
        assert producer.acked <= set(values)
        assert len(values) == len(set(values))  # idempotent: nothing twice
    finally:
        admin.close()


@pytest.mark.disruptive
def test_a_reassignment_held_in_progress_is_listed_survives_a_new_controller_and_cancels(fauxka_cluster_factory):
    from kafka import TopicPartition

    cluster = fauxka_cluster_factory(brokers=3, overrides=LAGGY)
    topic = _topic(cluster, assignment=[[1, 2], [2, 1]])
    admin = admin_client(cluster.bootstrap)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    try:
        with cluster.fault("replication", broker=3, topic=topic, delay_ms=-1):  # 3 cannot catch up
            assert admin.alter_partition_reassignments({tp0: [2, 3], tp1: [3, 1]}) == {tp0: None, tp1: None}
            listed = admin.list_partition_reassignments()
            assert listed[tp0] == {"replicas": [2, 3, 1], "adding_replicas": [3], "removing_replicas": [1]}
            assert listed[tp1] == {"replicas": [3, 1, 2], "adding_replicas": [3], "removing_replicas": [2]}
            assert admin.list_partition_reassignments({topic: [1, 4]}) == {tp1: listed[tp1]}
            for broker_id in cluster.broker_ids:
                cluster.wait_for(lambda b=broker_id: replicas_seen(cluster.address(b), topic)[0][0] == [2, 3, 1], 20,
                                 what=f"the full replica set at broker {broker_id}")
            old = cluster.controller()
            cluster.terminate(old)  # the new controller resumes from the topic znode
            cluster.wait_for(lambda: cluster.controller() not in (-1, old), 30, what="a new controller")
            cluster.restart(old)
            # kafka-python's admin keeps the controller id it first found and falls back only on
            # NOT_CONTROLLER: if its last metadata came while `old` was down, it knows no address
            # for it (UnknownBrokerIdError, as against Kafka). A client that connects now finds
            # the new controller.
            admin.close()
            admin = admin_client(cluster.bootstrap)
            assert admin.list_partition_reassignments() == listed
            assert admin.alter_partition_reassignments({tp0: None}) == {tp0: None}  # cancelled
            assert admin.list_partition_reassignments() == {tp1: listed[tp1]}
            cluster.wait_for(lambda: replicas_seen(cluster.address(1), topic)[0][:2] == ([2, 1], [1, 2]), 20,
                             what="partition 0 back on its origin replicas")
        # the fault gone, 3 catches up and partition 1 completes under the new controller
        cluster.wait_for(lambda: admin.list_partition_reassignments() == {}, 60, what="partition 1 done")
        cluster.wait_for(lambda: replicas_seen(cluster.address(1), topic)[1][:2] == ([3, 1], [1, 3]), 20,
                         what="partition 1 on [3, 1]")
    finally:
        admin.close()


@pytest.mark.disruptive
def test_reassignments_and_log_dir_moves_need_alter_or_describe_on_the_cluster(make_cluster):
    from kafka import TopicPartition
    from kafka.errors import ClusterAuthorizationFailedError

    from tests.integration.test_acl_authorization import zk_set

    cluster = make_cluster(1, {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                               "allow.everyone.if.no.acl.found": "false"}, start=False)
    zk_set(cluster, "/kafka-acl/Cluster/kafka-cluster", b'{"version":1,"acls":[{"principal":"User:ANONYMOUS",'
                                                        b'"permissionType":"Allow","operation":"ClusterAction","host":"*"}]}')
    cluster.start()
    address = cluster.address_of(1)
    response = alter(address, [("t", 0, [1]), ("t", 1, None)])
    assert int(response.error_code) == 31
    assert response.error_message.startswith("Request Request(") and response.error_message.endswith(
        "is not authorized.")
    assert outcomes(response) == {("t", 0): (31, response.error_message), ("t", 1): (31, response.error_message)}
    listed = listing(address, {"t": [0, 1]})
    assert (int(listed.error_code), listed.error_message.endswith("is not authorized.")) == (31, True)
    assert [(t.name, [(p.partition_index, list(p.replicas)) for p in t.partitions]) for t in listed.topics] == \
        [("t", [(0, []), (1, [])])]
    moved = send(address, 34, 2, {"dirs": [{"path": "/x", "topics": [{"name": "t", "partitions": [0, 1]}]}]})
    assert [(t.topic_name, [(p.partition_index, int(p.error_code)) for p in t.partitions]) for t in moved.results] \
        == [("t", [(0, 31), (1, 31)])]
    admin = admin_client(cluster.bootstrap)
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            admin.alter_partition_reassignments({TopicPartition("t", 0): [1]})
        with pytest.raises(ClusterAuthorizationFailedError):
            admin.list_partition_reassignments()
    finally:
        admin.close()
