"""The controller's pushed metadata as the clients see it (issue 25: "librdkafka, kafka-python and the
Java client see no difference"). A leader moved by the controller while one broker's ZooKeeper link
is cut, so that broker can learn it only from the controller's LeaderAndIsr / UpdateMetadata:
every broker's Metadata, read by librdkafka, by kafka-python's protocol classes and by kafka-clients'
own parser, names the new leader with the same leader epoch and ISR; producers of each client made
before the move follow it (acks=all) and every record is read back once, in order. A zombie
controller's UpdateMetadata and LeaderAndIsr, built and encoded by kafka-clients' request classes
(those Kafka's controller sends), are refused with STALE_CONTROLLER_EPOCH and change nothing."""

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaProducer
from kafka.protocol.old.metadata import MetadataRequest_v7, MetadataResponse_v7

from tests.client_programs import java_command, run_scenarios, scenario
from tests.fault_kit_helpers import _topic
from tests.integration.test_controller_push import _leader_seen_by, _logged
from tests.integration.test_old_versions import _ask

pytestmark = pytest.mark.timeout(420)


def _rdkafka_view(cluster, broker_id: int, topic: str) -> tuple:
    """(leader, leader epoch, ISR) of partition 0 in that one broker's Metadata, through librdkafka."""
    admin = AdminClient({"bootstrap.servers": cluster.address(broker_id), "socket.timeout.ms": 5000})
    p = admin.list_topics(topic, timeout=5).topics[topic].partitions[0]
    return p.leader, sorted(p.isrs)


def _kafka_python_view(cluster, broker_id: int, topic: str) -> tuple:
    response = _ask(cluster.address(broker_id), MetadataRequest_v7([topic], False), MetadataResponse_v7)
    [(error, _name, _internal, partitions)] = response.topics
    [(_error, _index, leader, epoch, _replicas, isr, _offline)] = [p for p in partitions if p[1] == 0]
    return error, leader, epoch, sorted(isr)


@pytest.mark.disruptive
def test_clients_follow_a_leader_move_pushed_to_a_broker_cut_from_zookeeper(fauxka_cluster_factory):
    # a long session: the cut broker stays registered (and in the ISR) while its link is down
    cluster = fauxka_cluster_factory(brokers=3, overrides={"zookeeper.session.timeout.ms": "30000"})
    controller = cluster.wait_for(lambda: max(cluster.controller(), 0), 10, what="a controller")
    cut, other = [b for b in cluster.broker_ids if b != controller]
    topic = _topic(cluster, assignment=[[other, controller, cut]])
    cluster.wait_for(lambda: _leader_seen_by(cluster, cut, topic) == other, 10, what="the leader at the cut broker")

    rdkafka = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0})
    kafka_python = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", linger_ms=0)
    try:
        def produce_both(stage: str) -> None:
            delivered: list = []
            rdkafka.produce(topic, f"librdkafka-{stage}".encode(), partition=0,
                            on_delivery=lambda err, msg: delivered.append((err, msg.partition())))
            assert rdkafka.flush(30) == 0 and delivered == [(None, 0)], delivered
            kafka_python.send(topic, f"kafka-python-{stage}".encode(), partition=0).get(30)

        produce_both("before")  # both producers hold the old leader now
        with cluster.fault("zookeeper", broker=cut):
            cluster.wait_for(lambda: _logged(cluster.data_dir / f"broker-{cut}.log", "zookeeper link cut (fault)"),
                             10, what="the cut broker's ZooKeeper link cut")
            cluster.move_leader(topic, 0, controller, timeout_s=20)
            state = cluster.partition_state(topic, 0)
            wanted = (controller, state["leader_epoch"], sorted(state["isr"]))
            # only the controller's requests can tell the cut broker; every broker then answers alike
            cluster.wait_for(lambda: all(_kafka_python_view(cluster, b, topic) == (0, *wanted)
                                         for b in cluster.broker_ids), 15, what="every broker naming the new leader")
            assert all(_rdkafka_view(cluster, b, topic) == (wanted[0], wanted[2]) for b in cluster.broker_ids)
            produce_both("after")  # each producer meets NOT_LEADER_OR_FOLLOWER, re-asks and follows
            assert not _logged(cluster.data_dir / f"broker-{cut}.log", "zookeeper link restored (fault gone)")
    finally:
        rdkafka.flush(10)
        kafka_python.close(10)

    addresses = [cluster.address(b) for b in cluster.broker_ids]
    epoch = int(cluster.faults.get("/controller_epoch"))
    java = run_scenarios(java_command(), cluster.bootstrap, {
        "push-leaders": [topic, *addresses],
        "push-stale": [topic, cluster.address(cut), str(controller), str(epoch - 1)],
    })
    seen = {address: (error, leader, epoch, sorted(isr))
            for address, (error, leader, epoch, isr) in scenario(java, "push-leaders")["seen"].items()}
    assert seen == {a: ("NONE", *wanted) for a in addresses}, seen
    assert scenario(java, "push-leaders")["produced"] == 0  # partition 0, acknowledged (acks=all)
    answers = scenario(java, "push-stale")["answers"]
    assert set(answers) == {"update_metadata v8", "update_metadata v5", "update_metadata v0",
                            "leader_and_isr v7", "leader_and_isr v4", "leader_and_isr v0"}
    for request, errors in answers.items():
        assert "STALE_CONTROLLER_EPOCH" in errors and "NONE" not in errors, (request, errors)
    # the zombie's leader (broker 3, epoch 99) was applied nowhere
    assert all(_kafka_python_view(cluster, b, topic) == (0, *wanted) for b in cluster.broker_ids)

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"{topic}-check",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        values = []
        while len(values) < 5:
            message = consumer.poll(30)
            assert message is not None and not message.error(), message and message.error()
            values.append(message.value().decode())
    finally:
        consumer.close()
    assert values == ["librdkafka-before", "kafka-python-before", "librdkafka-after", "kafka-python-after",
                      "java-after"]
