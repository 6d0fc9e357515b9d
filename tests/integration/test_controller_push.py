"""The controller tells the brokers (issue 25): LeaderAndIsr, UpdateMetadata and StopReplica from the
active controller, as Kafka's ZooKeeper-mode controller sends them, with its epoch for fencing.

A broker whose ZooKeeper link is cut (no watch can fire) still learns a leadership move; a request
of an older controller epoch (a zombie controller) or for an older broker epoch is refused and
changes nothing; a restarted broker converges."""

import json
import time
from pathlib import Path

import pytest

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.fault_kit_helpers import _topic
from tests.harness import wait_for
from tests.integration.test_leadership import partitions

STALE_CONTROLLER_EPOCH, STALE_BROKER_EPOCH = 11, 77


def _leader_seen_by(cluster, broker_id: int, topic: str, partition: int = 0) -> int:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": cluster.address(broker_id), "socket.timeout.ms": 5000})
    metadata = admin.list_topics(topic, timeout=5)  # librdkafka asks the one broker it is given
    return metadata.topics[topic].partitions[partition].leader


def _logged(path: Path, event: str) -> bool:
    return path.exists() and any(json.loads(line).get("event") == event
                                 for line in path.read_text().splitlines() if line.startswith("{"))


@pytest.mark.disruptive
def test_a_broker_cut_from_zookeeper_learns_a_leader_move_from_the_controller(fauxka_cluster_factory):
    # a long session: the cut broker stays registered (and in the ISR) while its link is down
    cluster = fauxka_cluster_factory(brokers=3, overrides={"zookeeper.session.timeout.ms": "30000"})
    controller = cluster.wait_for(lambda: max(cluster.controller(), 0), 10, what="a controller")
    cut, other = [b for b in cluster.broker_ids if b != controller]
    topic = _topic(cluster, assignment=[[other, controller, cut]])  # with a full ISR
    cluster.wait_for(lambda: _leader_seen_by(cluster, cut, topic) == other, 10, what="the leader at the cut broker")

    with cluster.fault("zookeeper", broker=cut):
        cluster.wait_for(lambda: _logged(cluster.data_dir / f"broker-{cut}.log", "zookeeper link cut (fault)"), 10,
                         what="the cut broker's ZooKeeper link cut")
        cluster.move_leader(topic, 0, controller, timeout_s=20)
        # no watch of the cut broker can fire: only the controller's requests can tell it
        cluster.wait_for(lambda: _leader_seen_by(cluster, cut, topic) == controller, 10,
                         what="the cut broker's Metadata naming the new leader")
        assert not _logged(cluster.data_dir / f"broker-{cut}.log", "zookeeper link restored (fault gone)")
        assert cut in cluster.registered()  # its session lives on: it was never out of the cluster


def _update_metadata(controller_id: int, controller_epoch: int, broker_epoch: int, topic: str, topic_id,
                     leader: int, replicas: list[int]) -> dict:
    return {"controller_id": controller_id, "controller_epoch": controller_epoch, "broker_epoch": broker_epoch,
            "topic_states": [{"topic_name": topic, "topic_id": topic_id, "partition_states": [{
                "partition_index": 0, "controller_epoch": controller_epoch, "leader": leader, "leader_epoch": 99,
                "isr": replicas, "zk_version": 99, "partition_epoch": 99, "replicas": replicas,
                "offline_replicas": [], "adding_replicas": [], "removing_replicas": [], "is_new": False}]}],
            "live_brokers": [], "live_leaders": [], "type": 0}


def test_requests_of_an_old_controller_or_for_an_old_broker_epoch_are_refused(cluster):
    topic = unique("fenced")
    controller = cluster.controller_id()
    [created] = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: [1, 2, 3]})])
    assert int(created.error_code) == 0
    target = next(b for b in cluster.brokers if b != controller)
    wait_for(lambda: partitions(cluster, target, topic).get(0, (-1,))[0] == 1, 10, what="the topic at the broker")
    before = partitions(cluster, target, topic)
    epoch = int(cluster.zk_get("/controller_epoch"))
    broker_epoch = -1  # not checked: the controller epoch alone refuses these
    address = cluster.address_of(target)
    # a zombie controller: the epoch before the current one, a leader the real controller never chose
    for key, version in ((6, 8), (4, 7), (6, 0), (4, 0)):
        values = _update_metadata(controller, epoch - 1, broker_epoch, topic, None, 3, [1, 2, 3])
        if version == 0:
            values["ungrouped_partition_states"] = [{**values["topic_states"][0]["partition_states"][0],
                                                     "topic_name": topic}]
        response = send(address, key, version, values, timeout_s=10)
        assert int(response.error_code) == STALE_CONTROLLER_EPOCH, (key, version, response)
    stop = send(address, 5, 4, {"controller_id": controller, "controller_epoch": epoch - 1, "broker_epoch": -1,
                                "topic_states": [{"topic_name": topic, "partition_states": [
                                    {"partition_index": 0, "leader_epoch": -2, "delete_partition": True}]}]})
    assert int(stop.error_code) == STALE_CONTROLLER_EPOCH
    assert [(t.topic_name, t.partition_index, int(t.error_code)) for t in stop.partition_errors] == [
        (topic, 0, STALE_CONTROLLER_EPOCH)]
    # a request meant for an earlier life of the broker (its registration's epoch is newer)
    response = send(address, 6, 8, _update_metadata(controller, epoch, 1, topic, None, 3, [1, 2, 3]))
    assert int(response.error_code) == STALE_BROKER_EPOCH
    time.sleep(0.5)
    assert partitions(cluster, target, topic) == before  # nothing applied
    assert cluster.zk_get(f"/brokers/topics/{topic}") is not None


def _leaders_seen_by(cluster, broker_id: int, topic: str) -> dict[int, int]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": cluster.address(broker_id), "socket.timeout.ms": 5000})
    topics = admin.list_topics(topic, timeout=5).topics
    return {p: m.leader for p, m in topics[topic].partitions.items()} if topic in topics else {}


@pytest.mark.disruptive
def test_a_restarted_broker_converges_on_what_changed_while_it_was_down(fauxka_cluster_factory):
    cluster = fauxka_cluster_factory(brokers=3)
    controller = cluster.wait_for(lambda: max(cluster.controller(), 0), 10, what="a controller")
    down = next(b for b in cluster.broker_ids if b != controller)
    keep = _topic(cluster, partitions=3, replication=3)
    cluster.terminate(down)  # controlled shutdown: its leaderships move while it is away
    cluster.wait_for(lambda: down not in cluster.registered(), 30, what="the broker gone")
    later = _topic(cluster, partitions=2, replication=2)  # created while it is down
    cluster.restart(down)
    for topic, count in ((keep, 3), (later, 2)):
        cluster.wait_for(lambda: len(_leaders_seen_by(cluster, down, topic)) == count
                         and _leaders_seen_by(cluster, down, topic)
                         == {p: cluster.leader(topic, p) for p in range(count)}, 20,
                         what=f"the restarted broker's leaders of {topic}")
