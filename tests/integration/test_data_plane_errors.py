"""Exact answers of Produce, Fetch and ListOffsets, through fauxka's own client (shared cluster)."""

import asyncio
import threading
import time
import uuid

from aiokafka.record.default_records import DefaultRecordBatch

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.data_helpers import batch, fetch, leader_of, list_offset, produce
from tests.harness import wait_for


def _topic(cluster, rf: int = 3, configs: dict | None = None) -> tuple[str, str, str]:
    """(topic, leader address, a follower's address) of a new one-partition topic."""
    name = unique("dp")
    [result] = create_topics(cluster.controller_address(), [topic_spec(name, 1, rf, configs=configs)])
    assert int(result.error_code) == 0, result
    leader = leader_of(cluster, name)
    other = next(b for b in cluster.brokers if b != leader)
    wait_for(lambda: int(produce(cluster.address_of(leader), name, 0, b"", acks=1)[0].error_code) in (0, 87, 2),
             10, what="leader ready")  # an empty produce: the leader knows its role
    return name, cluster.address_of(leader), cluster.address_of(other)


def _offsets(records: bytes) -> list[int]:
    offsets, pos = [], 0
    while pos < len(records):
        length = int.from_bytes(records[pos + 8:pos + 12], "big")
        b = DefaultRecordBatch(records[pos:pos + 12 + length])
        offsets += [r.offset for r in b]
        pos += 12 + length
    return offsets


def test_produce_then_fetch_returns_the_records_at_their_offsets(cluster):
    topic, leader, _ = _topic(cluster)
    first, _ = produce(leader, topic, 0, batch([b"a", b"b", b"c"]))
    second, _ = produce(leader, topic, 0, batch([b"d"]))
    assert (int(first.error_code), first.base_offset, second.base_offset) == (0, 0, 3)
    response = fetch(leader, topic, 0, 0)
    part = response.responses[0].partitions[0]
    assert int(part.error_code) == 0 and part.high_watermark == 4 and part.log_start_offset == 0
    assert _offsets(part.records) == [0, 1, 2, 3]
    assert response.session_id == 0


def test_produce_to_an_unknown_topic(cluster):
    part, _ = produce(cluster.bootstrap.split(",")[0], unique("missing"), 0, batch([b"x"]))
    assert int(part.error_code) == 3  # UNKNOWN_TOPIC_OR_PARTITION


def test_produce_with_invalid_acks(cluster):
    topic, leader, _ = _topic(cluster)
    part, _ = produce(leader, topic, 0, batch([b"x"]), acks=2)
    assert int(part.error_code) == 21  # INVALID_REQUIRED_ACKS


def test_produce_to_a_follower_names_the_leader(cluster):
    topic, leader, follower = _topic(cluster)
    part, response = produce(follower, topic, 0, batch([b"x"]))
    assert int(part.error_code) == 6  # NOT_LEADER_OR_FOLLOWER
    leader_id = leader_of(cluster, topic)
    assert part.current_leader.leader_id == leader_id and part.current_leader.leader_epoch == 0
    assert [(e.node_id, f"{e.host}:{e.port}") for e in response.node_endpoints] == [(leader_id, leader)]


def test_acks_all_needs_min_insync_replicas(cluster):
    topic, leader, _ = _topic(cluster, configs={"min.insync.replicas": "3"})
    wait_for(lambda: int(produce(leader, topic, 0, batch([b"x"]))[0].error_code) == 0, 15, what="full ISR acks")
    topic2, leader2, _ = _topic(cluster, rf=1, configs={"min.insync.replicas": "2"})
    part, _ = produce(leader2, topic2, 0, batch([b"x"]))
    assert int(part.error_code) == 19  # NOT_ENOUGH_REPLICAS
    part, _ = produce(leader2, topic2, 0, batch([b"x"]), acks=1)
    assert int(part.error_code) == 0


def test_fetch_out_of_range_and_fencing(cluster):
    topic, leader, follower = _topic(cluster)
    produce(leader, topic, 0, batch([b"a"]))
    assert int(fetch(leader, topic, 0, 5).responses[0].partitions[0].error_code) == 1  # OFFSET_OUT_OF_RANGE
    assert int(fetch(leader, topic, 0, 0, current_leader_epoch=3).responses[0].partitions[0].error_code) == 75  # UNKNOWN_LEADER_EPOCH
    # a consumer's Fetch v11+ may read from a follower (KIP-392: test_follower_fetching.py); v10 may not
    assert int(fetch(follower, topic, 0, 0, version=10).responses[0].partitions[0].error_code) == 6
    part = fetch(leader, topic, 0, 1).responses[0].partitions[0]  # at the end: nothing, no error
    assert int(part.error_code) == 0 and part.records in (b"", None)


def test_fetch_by_topic_id(cluster):
    topic, leader, _ = _topic(cluster)
    produce(leader, topic, 0, batch([b"a", b"b"]))
    topic_id = next(t.topic_id for t in send(leader, 3, 12, {"topics": [{"name": topic, "topic_id": None}],
                                                              "allow_auto_topic_creation": False,
                                                              "include_topic_authorized_operations": False}).topics)
    response = fetch(leader, "", 0, 0, version=13, topic_id=topic_id)
    assert response.responses[0].topic_id == topic_id
    assert _offsets(response.responses[0].partitions[0].records) == [0, 1]
    unknown = fetch(leader, "", 0, 0, version=13, topic_id=uuid.uuid4())
    assert int(unknown.responses[0].partitions[0].error_code) == 100  # UNKNOWN_TOPIC_ID


def _session_fetch(address: str, session_id: int, epoch: int, partitions: list[tuple[str, int, int]]):
    topics: dict[str, list[dict]] = {}
    for topic, partition, offset in partitions:
        topics.setdefault(topic, []).append({"partition": partition, "current_leader_epoch": -1, "fetch_offset": offset,
                                             "last_fetched_epoch": -1, "log_start_offset": -1,
                                             "partition_max_bytes": 1 << 20})
    return send(address, 1, 12, {
        "cluster_id": None, "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 24, "isolation_level": 0,
        "session_id": session_id, "session_epoch": epoch, "forgotten_topics_data": (), "rack_id": "",
        "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()]})


def test_incremental_fetch_sessions(cluster):
    topic, leader, _ = _topic(cluster)
    full = _session_fetch(leader, 0, 0, [(topic, 0, 0)])  # a full fetch that opens a session
    session = full.session_id
    assert session != 0 and [p.partition_index for p in full.responses[0].partitions] == [0]
    quiet = _session_fetch(leader, session, 1, [])  # nothing changed: no partition in the answer
    assert int(quiet.error_code) == 0 and quiet.session_id == session and quiet.responses == ()
    produce(leader, topic, 0, batch([b"a", b"b"]))
    news = _session_fetch(leader, session, 2, [])  # the session remembers partition 0 at offset 0
    assert _offsets(news.responses[0].partitions[0].records) == [0, 1]
    assert int(_session_fetch(leader, session, 7, []).error_code) == 71  # INVALID_FETCH_SESSION_EPOCH
    assert int(_session_fetch(leader, session + 1, 1, []).error_code) == 70  # FETCH_SESSION_ID_NOT_FOUND
    closed = _session_fetch(leader, session, -1, [(topic, 0, 2)])  # close: a sessionless full fetch
    assert closed.session_id == 0 and int(closed.error_code) == 0
    assert int(_session_fetch(leader, session, 3, []).error_code) == 70


def test_long_poll_waits_for_max_wait_then_answers_empty(cluster):
    topic, leader, _ = _topic(cluster)
    started = time.monotonic()
    part = fetch(leader, topic, 0, 0, max_wait_ms=800).responses[0].partitions[0]
    assert 0.7 <= time.monotonic() - started < 5
    assert int(part.error_code) == 0 and not part.records


def test_long_poll_is_woken_by_an_append(cluster):
    topic, leader, _ = _topic(cluster, rf=1)
    timer = threading.Timer(0.5, lambda: produce(leader, topic, 0, batch([b"late"]), acks=1))
    started = time.monotonic()
    timer.start()
    part = fetch(leader, topic, 0, 0, max_wait_ms=10000).responses[0].partitions[0]
    elapsed = time.monotonic() - started
    timer.join()
    assert _offsets(part.records) == [0]
    assert 0.4 < elapsed < 5


def test_the_first_batch_is_returned_whatever_the_partition_limit(cluster):
    topic, leader, _ = _topic(cluster, rf=1)
    produce(leader, topic, 0, batch([b"x" * 5000]), acks=1)
    produce(leader, topic, 0, batch([b"y" * 5000]), acks=1)
    part = fetch(leader, topic, 0, 0, partition_max_bytes=100).responses[0].partitions[0]
    assert _offsets(part.records) == [0]  # KIP-74: one whole batch, not the second


def test_list_offsets(cluster):
    topic, leader, _ = _topic(cluster, rf=1)
    produce(leader, topic, 0, batch([b"a", b"b", b"c"], timestamp=1000), acks=1)
    produce(leader, topic, 0, batch([b"d"], timestamp=5000), acks=1)
    assert list_offset(leader, topic, 0, -2).offset == 0
    assert list_offset(leader, topic, 0, -1).offset == 4
    assert list_offset(leader, topic, 0, -1, isolation_level=1).offset == 4
    found = list_offset(leader, topic, 0, 1001)
    assert (found.offset, found.timestamp) == (1, 1001)
    assert list_offset(leader, topic, 0, 4000).offset == 3
    assert list_offset(leader, topic, 0, 6000).offset == -1
    newest = list_offset(leader, topic, 0, -3)
    assert (newest.offset, newest.timestamp) == (3, 5000)


def test_acks_zero_gets_no_response(cluster):
    from fauxka.broker.protocol.build import build
    from fauxka.broker.protocol.codec import decode_response, encode_request, request_schema
    from fauxka.broker.protocol.framing import read_frame

    topic, leader, _ = _topic(cluster, rf=1)
    produce_cls, metadata_cls = request_schema(0, 9), request_schema(3, 12)

    async def exchange():
        host, _, port = leader.rpartition(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            writer.write(encode_request(build(produce_cls, {
                "transactional_id": None, "acks": 0, "timeout": 1000,
                "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch([b"fire"])}]}]}), 1, "t"))
            writer.write(encode_request(build(metadata_cls, {
                "topics": None, "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False}), 2, "t"))
            frame = await asyncio.wait_for(read_frame(reader, 1 << 20), 10)
            return decode_response(frame, metadata_cls)[0]
        finally:
            writer.close()

    assert asyncio.run(exchange()) == 2  # the first answer is Metadata's: Produce acks=0 got none
    assert list_offset(leader, topic, 0, -1).offset == 1  # and the record was appended
