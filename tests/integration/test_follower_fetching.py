"""KIP-392 fetch from follower on brokers in three racks (`broker.rack=rack-<id>`) with Kafka's
RackAwareReplicaSelector: the leader sends a consumer with client.rack to the in-sync follower of its
rack (Fetch's preferred_read_replica), the follower answers up to the high watermark it knows (and
fences stale epochs), librdkafka and Kafka's Java client read there, and go back to the leader when
the follower stops; a new leader whose high watermark lags its epoch's start answers ListOffsets
OFFSET_NOT_AVAILABLE (v5+; LEADER_NOT_AVAILABLE before). The tests run in order on one cluster: the
last two stop brokers."""

import json
import select
import signal
import subprocess
import time

import pytest
from confluent_kafka import Consumer, Producer
from prometheus_client.parser import text_string_to_metric_families

from fauxka.model.errors import ErrorCode
from tests.admin_helpers import create_topics, topic_spec, unique
from tests.client_programs import java_command
from tests.data_helpers import batch, fetch, list_offset, produce
from tests.harness import Cluster, wait_for
from tests.metrics_helpers import scrape

RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
LATEST = -1

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def racked(zookeeper, tmp_path_factory):
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("racked"), 3, {"replica.selector.class": RACK_AWARE})
    for broker_id, broker in cluster.brokers.items():
        with broker.config.open("a") as config:
            config.write(f"broker.rack=rack-{broker_id}\n")
    cluster.start()
    yield cluster
    cluster.stop()


def _topic(cluster, replicas: list[int]) -> str:
    topic = unique("follower-read")
    [result] = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: replicas})])
    assert int(result.error_code) == 0, result
    for broker_id in replicas:  # every replica has the partition and a first high watermark
        wait_for(lambda b=broker_id: fetch(cluster.address_of(b), topic, 0, 0, version=12,
                                           rack_id="x").responses[0].partitions[0].error_code == 0, 30,
                 what=f"broker {broker_id} serving {topic}")
    return topic


def _bytes_out(cluster, broker_id: int, topic: str) -> float:
    """BytesOutPerSec of `topic` on one broker: bytes read by consumers (followers' are not counted)."""
    text = scrape(cluster.brokers[broker_id].metrics_port)
    return sum(s.value for f in text_string_to_metric_families(text) for s in f.samples
               if s.name == "kafka_server_brokertopicmetrics_bytesout_total" and s.labels.get("topic") == topic)


def _part(response):
    return response.responses[0].partitions[0]


def _high_watermark_everywhere(cluster, topic: str, brokers: list[int], value: int) -> None:
    for b in brokers:
        wait_for(lambda b=b: _part(fetch(cluster.address_of(b), topic, 0, 0, rack_id="x")).high_watermark == value,
                 30, what=f"broker {b}'s high watermark at {value}")


def test_the_leader_names_the_racks_follower_which_answers_up_to_its_high_watermark(racked):
    topic = _topic(racked, [1, 2, 3])
    part, _ = produce(racked.address_of(1), topic, 0, batch([b"a", b"b", b"c"]))
    assert part.error_code == 0
    _high_watermark_everywhere(racked, topic, [1, 2, 3], 3)
    leader = racked.address_of(1)
    sent = _part(fetch(leader, topic, 0, 0, rack_id="rack-2", max_wait_ms=5000))
    # answered at once, without records, with the leader's offsets
    assert (sent.error_code, sent.preferred_read_replica, sent.high_watermark, bytes(sent.records)) == (0, 2, 3, b"")
    assert _part(fetch(leader, topic, 0, 0, rack_id="rack-3")).preferred_read_replica == 3
    for rack in ("rack-1", "", "rack-9"):  # the leader's rack, no rack, a rack without a replica: read here
        read = _part(fetch(leader, topic, 0, 0, rack_id=rack))
        assert (read.preferred_read_replica, read.high_watermark) == (-1, 3) and read.records, rack
    assert _part(fetch(leader, topic, 0, 0, version=10)).records  # no client metadata before v11
    follower = racked.address_of(2)
    read = _part(fetch(follower, topic, 0, 0, rack_id="rack-2", current_leader_epoch=0))
    assert (read.error_code, read.preferred_read_replica, read.high_watermark) == (0, -1, 3)
    assert len(read.records) == len(batch([b"a", b"b", b"c"]))
    assert bytes(_part(fetch(follower, topic, 0, 3, rack_id="rack-2")).records) == b""  # at its high watermark
    assert _part(fetch(follower, topic, 0, 4, rack_id="rack-2")).error_code == ErrorCode.offset_out_of_range
    assert _part(fetch(follower, topic, 0, 0, current_leader_epoch=1)).error_code == ErrorCode.unknown_leader_epoch
    # Fetch v10 and older come from consumers that read from the leader only
    assert _part(fetch(follower, topic, 0, 0, version=10)).error_code == ErrorCode.not_leader_or_follower


def test_librdkafka_reads_committed_records_from_its_racks_follower(racked):
    topic = _topic(racked, [1, 2, 3])
    producer = Producer({"bootstrap.servers": racked.bootstrap, "transactional.id": unique("tid")})
    producer.init_transactions(30)
    for values in (["c1", "c2"], ["aborted"], ["c3"]):
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value.encode(), partition=0)
        producer.commit_transaction(30) if values != ["aborted"] else producer.abort_transaction(30)
    consumer = Consumer({"bootstrap.servers": racked.bootstrap, "group.id": unique("g"), "client.rack": "rack-3",
                         "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        seen, deadline = [], time.monotonic() + 60
        while len(seen) < 3 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                seen.append(message.value().decode())
    finally:
        consumer.close()
    assert seen == ["c1", "c2", "c3"]
    assert _bytes_out(racked, 3, topic) > 0  # read from the follower in rack-3
    assert _bytes_out(racked, 1, topic) == 0 and _bytes_out(racked, 2, topic) == 0


def test_a_new_leader_behind_its_epochs_start_answers_offset_not_available_and_fences_old_epochs(racked):
    controller = racked.controller_id()
    old_leader, paused = [b for b in (1, 2, 3) if b != controller]
    topic = _topic(racked, [old_leader, controller, paused])
    racked.brokers[paused].signal(signal.SIGSTOP)  # in the ISR, fetching nothing: the high watermark stays
    try:
        part, _ = produce(racked.address_of(old_leader), topic, 0, batch([b"x", b"y"]), acks=1)
        assert part.error_code == 0
        wait_for(lambda: _part(fetch(racked.address_of(controller), topic, 0, 2, rack_id="x",
                                     current_leader_epoch=0)).error_code == 0, 30, what="the records replicated")
        racked.brokers[old_leader].stop()  # controlled shutdown: the controller leads next, at epoch 1
        new = racked.address_of(controller)
        wait_for(lambda: list_offset(new, topic, 0, LATEST, current_leader_epoch=1).error_code
                 == ErrorCode.offset_not_available, 30, what="the new leader at epoch 1")
        assert list_offset(new, topic, 0, LATEST, version=4).error_code == ErrorCode.leader_not_available
        assert _part(fetch(new, topic, 0, 0, current_leader_epoch=0)).error_code == ErrorCode.fenced_leader_epoch
        assert _part(fetch(new, topic, 0, 0, current_leader_epoch=2)).error_code == ErrorCode.unknown_leader_epoch
    finally:
        racked.brokers[paused].signal(signal.SIGCONT)
    wait_for(lambda: list_offset(new, topic, 0, LATEST).offset == 2, 30, what="the high watermark past the epoch start")
    follower = racked.address_of(paused)
    wait_for(lambda: _part(fetch(follower, topic, 0, 0, rack_id="x", current_leader_epoch=1)).error_code == 0, 30,
             what="the follower at epoch 1")
    assert _part(fetch(follower, topic, 0, 0, rack_id="x", current_leader_epoch=0)).error_code \
        == ErrorCode.fenced_leader_epoch


def test_a_java_consumer_reads_from_its_racks_follower_then_from_the_leader_once_it_stops(racked):
    leader, follower = sorted(b for b, broker in racked.brokers.items() if broker.process.poll() is None)[:2]
    topic = _topic(racked, [leader, follower])
    producer = Producer({"bootstrap.servers": racked.bootstrap, "acks": "all"})
    for i in range(50):
        producer.produce(topic, f"v{i}".encode(), partition=0)
    assert producer.flush(30) == 0
    java = subprocess.Popen([*java_command(), racked.bootstrap, f"rack-follower:{topic},rack-{follower},100,50"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = _line(java, 120)
        assert first == {"scenario": "rack-follower-first", "count": 50}, first
        assert _bytes_out(racked, follower, topic) > 0 and _bytes_out(racked, leader, topic) == 0
        racked.brokers[follower].stop()
        for i in range(50, 100):
            producer.produce(topic, f"v{i}".encode(), partition=0)
        assert producer.flush(30) == 0
        result = _line(java, 90)
    finally:
        java.kill()
        java.wait(10)
    assert "error" not in result, result
    assert result["records"] == [[i, f"v{i}"] for i in range(100)]  # every record once, in order
    assert _bytes_out(racked, leader, topic) > 0  # the rest came from the leader


def _line(process: subprocess.Popen, timeout_s: float) -> dict:
    """The Java program's next JSON line."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 1)
        if ready:
            line = process.stdout.readline()
            if not line:
                break
            if line.startswith("{"):
                return json.loads(line)
    raise AssertionError(f"no line from the Java consumer in {timeout_s} s: {process.stderr.read()[-3000:]}"
                         if process.poll() is not None else f"no line from the Java consumer in {timeout_s} s")
