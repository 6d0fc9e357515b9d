"""The oldest versions Kafka 3.9 serves, spoken by kafka-python's own old protocol classes over TCP
(an independent encoder): Produce v0-v2 with magic 0/1 message sets, Fetch v0-v3 down-converted,
ListOffsets v0, OffsetForLeaderEpoch v0-v1, OffsetCommit v0-v1 and OffsetFetch v0."""

import socket
import struct
import time

import pytest
from aiokafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.protocol.old import commit, fetch, list_offsets, offset_for_leader_epoch, produce
from kafka.record.memory_records import MemoryRecords

from tests.admin_helpers import create_topics, topic_spec, unique
from tests.data_helpers import batch, leader_of
from tests.data_helpers import fetch as fetch_v12
from tests.data_helpers import produce as produce_v11

NOW = int(time.time() * 1000)


def _topic(cluster, configs=None) -> tuple[str, str]:
    name = unique("old")
    [result] = create_topics(cluster.controller_address(), [topic_spec(name, 1, 3, configs=configs)])
    assert int(result.error_code) == 0, result
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            leader = leader_of(cluster, name)
        except (IndexError, StopIteration):
            leader = -1
        if leader >= 0 and _leads(address := "%s:%d" % cluster.brokers[leader].address, name):
            return name, address
        time.sleep(0.1)
    raise AssertionError("no leader")


def _leads(address: str, topic: str) -> bool:
    """The broker itself knows it leads partition 0 (ListOffsets v0 answers it without error)."""
    request = list_offsets.ListOffsetsRequest_v0(-1, [(topic, [(0, -1, 1)])])
    return _ask(address, request, list_offsets.ListOffsetsResponse_v0).topics[0][1][0][1] == 0


def _ask(address: str, request, response_class):
    host, _, port = address.rpartition(":")
    request.with_header(correlation_id=7, client_id="old-client")
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(request.encode(header=True, framed=True))
        size = struct.unpack(">i", _read(sock, 4))[0]
        payload = _read(sock, size)
    assert struct.unpack(">i", payload[:4])[0] == 7
    return response_class.decode(payload[4:])


def _read(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "connection closed"
        data += chunk
    return data


def _message_set(magic: int, codec: int = 0, count: int = 3, base_ts: int = NOW) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, codec, 1 << 20)
    for i in range(count):
        builder.append(i, base_ts + i, b"k%d" % i, b"v%d" % i)
    return bytes(builder.build())


def _produce(address, topic, version, records, acks=-1):
    request = getattr(produce, f"ProduceRequest_v{version}")
    response = getattr(produce, f"ProduceResponse_v{version}")
    args = (acks, 10000, [(topic, [(0, records)])])
    return _ask(address, request(*args), response)


def _fetch(address, topic, version, offset=0, max_bytes=1 << 20):
    request = getattr(fetch, f"FetchRequest_v{version}")
    response = getattr(fetch, f"FetchResponse_v{version}")
    head = (-1, 100, 1) + ((max_bytes,) if version == 3 else ())
    answer = _ask(address, request(*head, [(topic, [(0, offset, max_bytes)])]), response)
    part = answer.topics[0][1][0]
    return part, _messages(part[-1])


def _messages(buf: bytes) -> list[tuple]:
    """(magic, offset, timestamp, key, value, codec) of each message an old consumer reads."""
    out, records = [], MemoryRecords(buf)
    while records.has_next():
        wrapper = records.next_batch()
        assert wrapper.validate_crc()
        out += [(wrapper.magic, r.offset, r.timestamp, r.key, r.value, wrapper.compression_type) for r in wrapper]
    return out


@pytest.mark.parametrize("version,magic", [(0, 0), (1, 0), (2, 1)])
def test_produce_old_versions_then_fetch_every_old_version(cluster, version, magic):
    topic, address = _topic(cluster)
    answer = _produce(address, topic, version, _message_set(magic))
    [(name, [part])] = answer.topics
    assert name == topic and part[:3] == (0, 0, 0)  # partition, no error, base offset 0
    if version == 2:
        assert part[3] == -1  # log_append_time: -1 under CreateTime
    if version >= 1:
        assert answer.throttle_time_ms == 0
    for fetch_version in range(4):
        part, got = _fetch(address, topic, fetch_version)
        assert part[1] == 0 and part[2] == 3  # no error, high watermark
        want_magic = 0 if fetch_version <= 1 else 1
        stamps = [NOW + i if magic == 1 else -1 for i in range(3)] if want_magic == 1 else [None] * 3
        assert got == [(want_magic, i, stamps[i], b"k%d" % i, b"v%d" % i, 0) for i in range(3)]


@pytest.mark.parametrize("codec", [1, 2, 3])
def test_compressed_magic1_produce_keeps_its_codec_on_fetch_v2(cluster, codec):
    topic, address = _topic(cluster)
    answer = _produce(address, topic, 2, _message_set(1, codec, count=4))
    assert answer.topics[0][1][0][1] == 0
    _, got = _fetch(address, topic, 2, offset=2)  # compressed: the whole wrapper, the consumer skips
    assert [(m, o, k, c) for m, o, _, k, _, c in got] == [(1, i, b"k%d" % i, codec) for i in range(4)]
    stored = fetch_v12(address, topic, 0, 0).responses[0].partitions[0].records
    assert stored[16] == 2 and stored[22] & 0x07 == codec  # kept as one v2 batch, same codec


def test_fetch_v0_to_v3_down_convert_v2_batches_from_the_fetch_offset(cluster):
    topic, address = _topic(cluster)
    part, _ = produce_v11(address, topic, 0, batch([b"a", b"b", b"c"], timestamp=NOW, keys=[b"x", b"y", b"z"]))
    assert int(part.error_code) == 0
    for version in range(4):
        _, got = _fetch(address, topic, version, offset=1)
        magic = 0 if version <= 1 else 1
        assert got == [(magic, 1, NOW + 1 if magic else None, b"y", b"b", 0),
                       (magic, 2, NOW + 2 if magic else None, b"z", b"c", 0)]
    _produce(address, topic, 1, _message_set(0, count=5))
    metrics = _metrics(cluster, address)
    assert metrics[f'kafka_server_brokertopicmetrics_fetchmessageconversions_total{{topic="{topic}"}}'] == 8  # 4 fetches x 2
    assert metrics[f'kafka_server_brokertopicmetrics_producemessageconversions_total{{topic="{topic}"}}'] == 5


def _metrics(cluster, address) -> dict[str, float]:
    import urllib.request

    broker = next(b for b in cluster.brokers.values() if "%s:%d" % b.address == address)
    text = urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=10).read().decode()
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


def test_log_append_time_topic_answers_produce_v2_with_the_time(cluster):
    topic, address = _topic(cluster, {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    answer = _produce(address, topic, 2, _message_set(1))
    log_append_time = answer.topics[0][1][0][3]
    assert before <= log_append_time <= int(time.time() * 1000)
    _, got = _fetch(address, topic, 3)
    assert {t for _, _, t, *_ in got} == {log_append_time}


def test_down_conversion_disabled_is_unsupported_version(cluster):
    topic, address = _topic(cluster, {"message.downconversion.enable": "false"})
    _produce(address, topic, 2, _message_set(1))
    part, got = _fetch(address, topic, 3)
    assert part[1] == 35 and got == []  # UNSUPPORTED_VERSION
    assert fetch_v12(address, topic, 0, 0).responses[0].partitions[0].error_code == 0


def test_zstd_topic_is_unsupported_compression_type_before_fetch_v10(cluster):
    topic, address = _topic(cluster, {"compression.type": "zstd"})
    _produce(address, topic, 2, _message_set(1))
    assert _fetch(address, topic, 1)[0][1] == 76  # UNSUPPORTED_COMPRESSION_TYPE


def test_offset_for_leader_epoch_v0_v1(cluster):
    topic, address = _topic(cluster)
    _produce(address, topic, 2, _message_set(1))
    v0 = _ask(address, offset_for_leader_epoch.OffsetForLeaderEpochRequest_v0([(topic, [(0, 0)])]),
              offset_for_leader_epoch.OffsetForLeaderEpochResponse_v0)
    assert v0.topics[0][1][0] == (0, 0, 3)  # error, partition, end offset
    v1 = _ask(address, offset_for_leader_epoch.OffsetForLeaderEpochRequest_v1([(topic, [(0, 0)])]),
              offset_for_leader_epoch.OffsetForLeaderEpochResponse_v1)
    assert v1.topics[0][1][0] == (0, 0, 0, 3)  # error, partition, leader epoch, end offset


def test_list_offsets_v0_answers_segment_boundaries(cluster):
    topic, address = _topic(cluster)
    _produce(address, topic, 2, _message_set(1))

    def ask(timestamp, max_num):
        request = list_offsets.ListOffsetsRequest_v0(-1, [(topic, [(0, timestamp, max_num)])])
        [(name, [part])] = _ask(address, request, list_offsets.ListOffsetsResponse_v0).topics
        return part[1], list(part[2])

    assert ask(-1, 10) == (0, [3, 0])  # the log end offset, then the one segment's base
    assert ask(-1, 1) == (0, [3])
    assert ask(-2, 10) == (0, [0])
    assert ask(int(time.time() * 1000) + 3_600_000, 10) == (0, [3, 0])
    assert ask(0, 10) == (0, [])  # nothing modified before 1970
    assert ask(-3, 10) == (35, [])  # UNSUPPORTED_VERSION: v0 knows only -1 and -2


def test_offset_commit_v0_and_fetch_v0_use_zookeeper_not_the_coordinator(cluster):
    topic, _ = _topic(cluster)
    group = unique("zkgroup")
    addresses = ["%s:%d" % b.address for b in cluster.brokers.values()]

    def fetch_offsets(address, version):
        request = getattr(commit, f"OffsetFetchRequest_v{version}")(group, [(topic, [0, 7])])
        answer = _ask(address, request, getattr(commit, f"OffsetFetchResponse_v{version}"))
        return [(p[0], p[1], p[3]) for p in answer.topics[0][1]]  # partition, offset, error

    for i, address in enumerate(addresses):  # any broker answers v0: no coordinator involved
        answer = _ask(address, commit.OffsetCommitRequest_v0(group, [(topic, [(0, 40 + i, "m")])]),
                      commit.OffsetCommitResponse_v0)
        assert answer.topics == [(topic, [(0, 0)])]
        assert fetch_offsets(addresses[(i + 1) % len(addresses)], 0) == [(0, 40 + i, 0), (7, -1, 0)]
    big = _ask(addresses[0], commit.OffsetCommitRequest_v0(group, [(topic, [(0, 1, "x" * 5000)])]),
               commit.OffsetCommitResponse_v0)
    assert big.topics == [(topic, [(0, 12)])]  # OFFSET_METADATA_TOO_LARGE
    coordinator = _coordinator(cluster, group)
    assert fetch_offsets(coordinator, 1)[0][:2] == (0, -1)  # the coordinator never saw the v0 commit
    # an explicit commit time, recent: one older than offsets.retention.minutes would rightly expire
    # at an expiry pass falling between the commit and the fetch
    recent = int(time.time() * 1000) - 60_000
    answer = _ask(coordinator, commit.OffsetCommitRequest_v1(group, -1, "", [(topic, [(0, 77, recent, "")])]),
                  commit.OffsetCommitResponse_v1)
    assert answer.topics == [(topic, [(0, 0)])]
    assert fetch_offsets(coordinator, 1)[0][:2] == (0, 77)
    assert fetch_offsets(addresses[0], 0)[0] == (0, 42, 0)  # ZooKeeper's offset is still v0's


def _coordinator(cluster, group) -> str:
    from kafka.protocol.old.find_coordinator import FindCoordinatorRequest_v0, FindCoordinatorResponse_v0

    deadline = time.monotonic() + 20
    while True:
        answer = _ask(cluster.bootstrap.split(",")[0], FindCoordinatorRequest_v0(group), FindCoordinatorResponse_v0)
        if answer.error_code == 0:
            return f"{answer.host}:{answer.port}"
        assert time.monotonic() < deadline, answer
        time.sleep(0.2)



@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4"])
@pytest.mark.parametrize("api_version", [(0, 9), (0, 10, 0)])
def test_kafka_python_clients_pinned_to_old_brokers(cluster, codec, api_version):
    """kafka-python's producer and consumer with api_version pinned (no ApiVersions): 0.9 speaks
    Produce/Fetch v1 with magic 0, 0.10.0 Produce/Fetch v2 with magic 1, both ListOffsets v0."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    if codec == "lz4" and api_version == (0, 9):
        pytest.skip("kafka-python refuses lz4 at magic 0 (KAFKA-3160)")
    topic, _ = _topic(cluster)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, api_version=api_version, acks="all",
                             compression_type=None if codec == "none" else codec, enable_idempotence=False)
    for i in range(10):
        producer.send(topic, b"v%d" % i, b"k%d" % i, partition=0, timestamp_ms=NOW + i)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap, api_version=api_version,
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=15000)
    consumer.assign([TopicPartition(topic, 0)])
    got = []
    for m in consumer:
        got.append((m.offset, m.key, m.value, m.timestamp))
        if len(got) == 10:
            break
    consumer.close()
    stamps = [NOW + i for i in range(10)] if api_version >= (0, 10) else [None] * 10  # magic 0: none
    assert [g[:3] for g in got] == [(i, b"k%d" % i, b"v%d" % i) for i in range(10)]
    assert [g[3] for g in got] == stamps


def test_fetch_v0_v2_limits_are_hard_v3_sends_at_least_one_batch(cluster):
    topic, address = _topic(cluster)
    _produce(address, topic, 2, _message_set(1))
    for version in range(3):
        part, got = _fetch(address, topic, version, max_bytes=20)
        assert part[1] == 0 and part[2] == 3 and got == []
    _, got = _fetch(address, topic, 3, max_bytes=20)
    assert [o for _, o, *_ in got] == [0, 1, 2]


def test_produce_v3_and_later_refuse_what_kafka_3_9_refuses_v2_accepts_any_magic(cluster):
    topic, address = _topic(cluster)
    assert int(produce_v11(address, topic, 0, _message_set(1), version=3)[0].error_code) == 87  # INVALID_RECORD
    assert int(produce_v11(address, topic, 0, batch([b"a"]) + batch([b"b"]), version=3)[0].error_code) == 87
    from aiokafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(2, 4, 0, -1, -1, -1, 1 << 20)
    builder.append(0, NOW, None, b"z" * 100, [])
    zstd_batch = bytes(builder.build())
    assert int(produce_v11(address, topic, 0, zstd_batch, version=6)[0].error_code) == 76  # UNSUPPORTED_COMPRESSION
    assert int(produce_v11(address, topic, 0, zstd_batch, version=7)[0].error_code) == 0
    answer = _produce(address, topic, 2, batch([b"v2 batch in v2"], timestamp=NOW))  # not checked below v3
    assert answer.topics[0][1][0][1:3] == (0, 1)


def test_offset_commit_in_completing_rebalance_checks_the_generation_first(cluster):
    """Kafka's validateOffsetCommit runs before the group's state: while the group waits for its
    leader's SyncGroup (CompletingRebalance), a commit with an older generation is ILLEGAL_GENERATION
    and only one with the current generation REBALANCE_IN_PROGRESS (librdkafka's 0113
    v_commit_during_rebalance: a manual commit during a cooperative rebalance)."""
    from kafka.protocol.old.group import JoinGroupRequest_v0, JoinGroupResponse_v0

    topic, _ = _topic(cluster)
    group = unique("completing")
    coordinator = _coordinator(cluster, group)
    joined = _ask(coordinator, JoinGroupRequest_v0(group, 30000, "", "consumer", [("range", b"")]),
                  JoinGroupResponse_v0)
    assert joined.error_code == 0 and joined.generation_id == 1 and joined.leader_id == joined.member_id

    def committed(generation: int) -> int:
        request = commit.OffsetCommitRequest_v2(group, generation, joined.member_id, -1, [(topic, [(0, 5, "")])])
        return _ask(coordinator, request, commit.OffsetCommitResponse_v2).topics[0][1][0][1]

    assert committed(0) == 22  # ILLEGAL_GENERATION: a generation behind, whatever the state
    assert committed(1) == 27  # REBALANCE_IN_PROGRESS: no SyncGroup from the leader yet
