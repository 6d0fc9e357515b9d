"""The api versions kio lacks (fauxka/broker/protocol/old_versions.py) against kafka-python's own classes.

kafka-python's hand-written `kafka.protocol.old` structs still describe Produce v0-v2, Fetch v0-v3
and the other versions Kafka 4.x retired; WriteTxnMarkers v0 is described here from Kafka 3.9.0's
WriteTxnMarkersRequest.json with kafka-python's primitives. Each case is a value in wire order
(nested tuples, exactly what kafka-python's Schema encodes): kafka-python's bytes must decode to it
through fauxka's codec, and fauxka's bytes must decode to it through kafka-python.
"""

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.old import admin, commit, fetch, list_offsets, offset_for_leader_epoch, produce
from kafka.protocol.old.types import Schema

from fauxka.broker.protocol import api_table, codec, old_versions
from fauxka.broker.protocol.build import _plan as _build_plan
from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.derive import Add, Derivation, Drop, derive, to_wire, wire_class
from kio.index import load_request_schema
from tests.unit import kafka39_structs as k39

NOW = 1700000000123
PRINCIPALS = (("User", "alice"), ("User", "bob"))


RECORDS = b"\x00" * 12 + b"legacy message set bytes"
REQUESTS = [  # (key, version, kafka-python class, value in wire order)
    *[(0, v, produce.ProduceRequest[v], (-1, 1500, (("t", ((0, RECORDS), (3, b""))), ("u", ()))))
      for v in (0, 1, 2)],
    *[(1, v, fetch.FetchRequest[v], (-1, 500, 1, (("t", ((0, 7, 1 << 20), (1, 0, 99))),)))
      for v in (0, 1, 2)],
    (1, 3, fetch.FetchRequest[3], (-1, 500, 1, 52428800, (("t", ((0, 7, 1 << 20),)),))),
    (2, 0, list_offsets.ListOffsetsRequest[0], (-1, (("t", ((0, -1, 1), (2, 1700000000123, 5))),))),
    (8, 0, commit.OffsetCommitRequest[0], ("g", (("t", ((0, 42, "meta"), (1, 7, None))),))),
    (8, 1, commit.OffsetCommitRequest[1], ("g", 3, "m-1", (("t", ((0, 42, 1700000000123, "meta"),)),))),
    (9, 0, commit.OffsetFetchRequest[0], ("g", (("t", (0, 1, 2)),))),
    (23, 0, offset_for_leader_epoch.OffsetForLeaderEpochRequest[0], ((("t", ((0, 4), (1, 0))),),)),
    (23, 1, offset_for_leader_epoch.OffsetForLeaderEpochRequest[1], ((("t", ((0, 4),)),),)),
    (27, 0, k39.WRITE_TXN_MARKERS_V0[0], (((5, 1, True, (("t", (0, 1)),), 9),),)),
    (19, 0, admin.CreateTopicsRequest[0], ((("t", 3, 2, ((0, (1, 2)),), (("retention.ms", "9"),)),), 3000)),
    (19, 1, admin.CreateTopicsRequest[1], ((("t", -1, -1, (), ()),), 3000, True)),
    (20, 0, admin.DeleteTopicsRequest[0], (("t", "u"), 3000)),
    (29, 0, admin.DescribeAclsRequest[0], (2, "t", "User:alice", "*", 3, 3)),
    (30, 0, admin.CreateAclsRequest[0], (((2, "t", "User:alice", "*", 3, 3),),)),
    (31, 0, admin.DeleteAclsRequest[0], (((2, None, None, None, 1, 1),),)),
    (32, 0, admin.DescribeConfigsRequest[0], (((2, "t", ("retention.ms",)), (4, "1", None)),)),
    (34, 0, k39.ALTER_REPLICA_LOG_DIRS_V0[0], ((("/d", (("t", (0, 1)),)),),)),
    (35, 0, k39.DESCRIBE_LOG_DIRS_REQUEST_V0, ((("t", (0, 1)),),)),
    (38, 0, k39.CREATE_DELEGATION_TOKEN_V0[0], (PRINCIPALS, 86400000)),
    (39, 0, k39.RENEW_DELEGATION_TOKEN_V0[0], (b"hmac", 3600000)),
    (40, 0, k39.EXPIRE_DELEGATION_TOKEN_V0[0], (b"hmac", -1)),
    (41, 0, k39.DESCRIBE_DELEGATION_TOKEN_V0[0], (PRINCIPALS,)),
    (7, 1, k39.CONTROLLED_SHUTDOWN[1][0], (2,)),
    *[(7, v, k39.CONTROLLED_SHUTDOWN[v][0], (2, 17)) for v in (2, 3)],
    (56, 0, k39.ALTER_PARTITION[0][0], (1, 9, (("t", ((0, 2, (1, 2), 4), (3, 5, (), 0))), ("u", ())))),
    (56, 1, k39.ALTER_PARTITION[1][0], (1, -1, (("t", ((0, 2, (1, 2), 1, 4),)),))),
]
RESPONSES = [  # (key, version, kafka-python class, value in wire order)
    (0, 0, produce.ProduceResponse[0], ((("t", ((0, 0, 17), (3, 6, -1))),),)),
    (0, 1, produce.ProduceResponse[1], ((("t", ((0, 0, 17),)),), 25)),
    (0, 2, produce.ProduceResponse[2], ((("t", ((0, 0, 17, 1700000000123), (1, 0, 3, -1))),), 25)),
    (1, 0, fetch.FetchResponse[0], ((("t", ((0, 0, 100, RECORDS), (1, 1, -1, b""))),),)),
    *[(1, v, fetch.FetchResponse[v], (25, (("t", ((0, 0, 100, RECORDS),)),))) for v in (1, 2, 3)],
    (2, 0, list_offsets.ListOffsetsResponse[0], ((("t", ((0, 0, (12, 0)), (1, 3, ()))),),)),
    (8, 0, commit.OffsetCommitResponse[0], ((("t", ((0, 0), (1, 27))),),)),
    (8, 1, commit.OffsetCommitResponse[1], ((("t", ((0, 0),)),),)),
    (9, 0, commit.OffsetFetchResponse[0], ((("t", ((0, 42, "meta", 0), (1, -1, "", 3))),),)),
    (23, 0, offset_for_leader_epoch.OffsetForLeaderEpochResponse[0], ((("t", ((0, 0, 120), (1, 3, -1))),),)),
    (23, 1, offset_for_leader_epoch.OffsetForLeaderEpochResponse[1], ((("t", ((0, 0, 4, 120),)),),)),
    (27, 0, k39.WRITE_TXN_MARKERS_V0[1], (((5, (("t", ((0, 0), (1, 6))),)),),)),
    (19, 0, admin.CreateTopicsResponse[0], ((("t", 0), ("u", 36)),)),
    (19, 1, admin.CreateTopicsResponse[1], ((("t", 0, None), ("u", 36, "exists")),)),
    (20, 0, admin.DeleteTopicsResponse[0], ((("t", 0), ("u", 3)),)),
    (29, 0, admin.DescribeAclsResponse[0], (0, 0, None, ((2, "t", (("User:alice", "*", 3, 3),)),))),
    (30, 0, admin.CreateAclsResponse[0], (0, ((0, None), (31, "denied")))),
    (31, 0, admin.DeleteAclsResponse[0], (0, ((0, None, ((0, None, 2, "t", "User:alice", "*", 3, 3),)),))),
    (32, 0, admin.DescribeConfigsResponse[0], (0, ((0, None, 2, "t", (
        ("retention.ms", "9", False, True, False), ("x", None, True, False, True))),))),
    (34, 0, k39.ALTER_REPLICA_LOG_DIRS_V0[1], (0, (("t", ((0, 0), (1, 57))),))),
    (35, 0, admin.DescribeLogDirsResponse[0], (0, ((0, "/d", (("t", ((0, 1024, 0, False),)),)),))),
    (38, 0, k39.CREATE_DELEGATION_TOKEN_V0[1], (0, "User", "alice", NOW, NOW + 1, NOW + 2, "id", b"h", 0)),
    (38, 0, k39.CREATE_DELEGATION_TOKEN_V0[1], (65, "", "", -1, -1, -1, "", b"", 0)),
    (39, 0, k39.RENEW_DELEGATION_TOKEN_V0[1], (0, NOW, 0)),
    (40, 0, k39.EXPIRE_DELEGATION_TOKEN_V0[1], (0, -1, 0)),
    (41, 0, k39.DESCRIBE_DELEGATION_TOKEN_V0[1], (0, (("User", "alice", NOW, NOW + 1, NOW + 2, "id", b"h",
                                                        PRINCIPALS),), 0)),
    *[(7, v, k39.CONTROLLED_SHUTDOWN[v][1], (0, (("t", 0), ("u", 3)))) for v in (1, 2, 3)],
    (7, 3, k39.CONTROLLED_SHUTDOWN[3][1], (35, ())),
    (56, 0, k39.ALTER_PARTITION[0][1], (25, 0, (("t", ((0, 0, 1, 2, (1, 2), 4), (1, 58, -1, -1, (), -1))),))),
    (56, 1, k39.ALTER_PARTITION[1][1], (0, 0, (("t", ((0, 0, 1, 2, (1, 2), 1, 4),)),))),
    (56, 1, k39.ALTER_PARTITION[1][1], (0, 41, ())),
]
_ID = lambda case: f"{case[0]}v{case[1]}"  # noqa: E731


def _plain(obj):
    """A decoded fauxka entity as a value in wire order (what kafka-python's Schema holds)."""
    if isinstance(obj, (tuple, list)):
        return tuple(_plain(v) for v in obj)
    if isinstance(obj, datetime.timedelta):
        return obj // datetime.timedelta(milliseconds=1)
    if isinstance(obj, datetime.datetime):
        return int(obj.timestamp() * 1000)
    if hasattr(obj, "__dataclass_fields__"):
        wire = to_wire(obj)
        return tuple(_wire_value(wire, name) for name in wire.__dataclass_fields__)
    if isinstance(obj, bytes):
        return bytes(obj)
    return int(obj) if isinstance(obj, int) and not isinstance(obj, bool) else obj


def _wire_value(entity, name):
    value = getattr(entity, name)
    if value is None and entity.__dataclass_fields__[name].metadata.get("kafka_type") == "datetime_i64":
        return -1  # kio reads a -1 timestamp as None
    return _plain(value)


def _values(cls, plain) -> dict:
    """Keyword values for `build(cls, ...)` from a value in wire order."""
    values = {}
    for f, value in zip(wire_class(cls).__dataclass_fields__.values(), plain):
        sub = _entity_of(cls, f.name)
        if sub is not None and value is not None:
            value = [_values(sub, v) for v in value] if isinstance(value, tuple) and (
                not value or isinstance(value[0], tuple)) else _values(sub, value)
        if f.metadata.get("kafka_type") == "datetime_i64" and not isinstance(value, tuple):
            value = None if value == -1 else datetime.datetime.fromtimestamp(value / 1000, datetime.UTC)
        values[f.name] = value
    return values


def _entity_of(cls, name):
    return next((sub for field, kind, sub in _build_plan(cls) if field == name and kind in ("entity", "entities")), None)


def _kp(value):
    """kafka-python decodes arrays as lists and tagged fields as dicts: compare as tuples, without tags."""
    if isinstance(value, (list, tuple)):
        return tuple(_kp(v) for v in value if v != {})
    return value


def _api(key: int) -> api_table.Api:
    return api_table.Api(key, "unused", *old_versions.version_range(key))


@pytest.mark.parametrize("case", REQUESTS, ids=_ID)
def test_kafka_python_request_decodes(case):
    key, version, kp_cls, plain = case
    kp = kp_cls(*plain)
    kp.with_header(correlation_id=77, client_id="kp")
    request = codec.decode_request(kp.encode(header=True), _api(key), version)
    assert (request.correlation_id, request.client_id) == (77, "kp")
    assert type(request.body) is codec.request_schema(key, version)
    assert _plain(request.body) == plain


@pytest.mark.parametrize("case", REQUESTS, ids=_ID)
def test_request_encodes_for_kafka_python(case):
    key, version, kp_cls, plain = case
    cls = codec.request_schema(key, version)
    framed = codec.encode_request(build(cls, _values(cls, plain)), correlation_id=5, client_id="f")
    decoded = kp_cls.decode(framed[4:], header=True)
    assert decoded.header.correlation_id == 5 and decoded.header.api_version == version
    assert _kp([getattr(decoded, n) for n in kp_cls.SCHEMA.names]) == plain
    assert decoded.header.client_id == "f"
    assert decoded.encode(header=True, framed=True) == framed  # no byte more or less


@pytest.mark.parametrize("case", RESPONSES, ids=_ID)
def test_response_encodes_for_kafka_python(case):
    key, version, kp_cls, plain = case
    cls = codec.response_schema(key, version)
    framed = codec.encode_response(31, build(cls, _values(cls, plain)))
    decoded = kp_cls.decode(framed, header=True, framed=True)
    assert decoded.header.correlation_id == 31
    assert _kp([getattr(decoded, n) for n in kp_cls.SCHEMA.names]) == plain
    assert decoded.encode(header=True, framed=True) == framed  # no byte more or less


@pytest.mark.parametrize("case", RESPONSES, ids=_ID)
def test_kafka_python_response_decodes(case):
    key, version, kp_cls, plain = case
    kp = kp_cls(*plain)
    kp.with_header(correlation_id=8)
    correlation_id, body = codec.decode_response(kp.encode(header=True), codec.request_schema(key, version))
    assert correlation_id == 8 and _plain(body) == plain


def test_dropped_fields_read_as_kafka_defaults():
    produce_v0 = codec.request_schema(0, 0)(acks=1, timeout=datetime.timedelta(seconds=1), topic_data=())
    assert produce_v0.transactional_id is None
    fetch_v2 = _decode(1, 2, (-1, 500, 1, ()))
    assert fetch_v2.max_bytes == 2**31 - 1 and fetch_v2.isolation_level == 0
    assert _decode(1, 3, (-1, 500, 1, 1000, ())).max_bytes == 1000
    epoch = _decode(23, 1, ((("t", ((0, 4),)),),)).topics[0].partitions[0]
    assert (epoch.current_leader_epoch, epoch.leader_epoch) == (-1, 4)
    commit_v0 = _decode(8, 0, ("g", ()))
    assert (commit_v0.generation_id_or_member_epoch, commit_v0.member_id) == (-1, "")
    partition = _decode(8, 1, ("g", 3, "m", (("t", ((0, 42, 99, None),)),))).topics[0].partitions[0]
    assert (partition.committed_offset, partition.commit_timestamp) == (42, 99)


def _decode(key, version, plain):
    cls = codec.request_schema(key, version)
    framed = codec.encode_request(build(cls, _values(cls, plain)), correlation_id=1, client_id=None)
    return codec.decode_request(framed[4:], _api(key), version).body


def test_a_handler_builds_old_versions_with_the_newest_shape():
    """build() with the fields a Produce/Fetch handler fills for every version."""
    produce_values = {"throttle_time": 0, "responses": [{"name": "t", "partition_responses": [
        {"index": 0, "error_code": 0, "base_offset": 5, "log_append_time": None, "log_start_offset": 0,
         "record_errors": [], "error_message": None}]}]}
    for version in (0, 1, 2, 3):
        framed = codec.encode_response(1, build(codec.response_schema(0, version), produce_values))
        decoded = produce.ProduceResponse[version].decode(framed, header=True, framed=True)
        assert decoded.responses[0][1][0][:3] == (0, 0, 5)
    fetch_values = {"throttle_time": 3, "responses": [{"topic": "t", "partitions": [
        {"partition_index": 0, "error_code": 0, "high_watermark": 9, "last_stable_offset": 9,
         "log_start_offset": 0, "aborted_transactions": None, "records": RECORDS}]}]}
    for version in (0, 1, 2, 3, 4):
        framed = codec.encode_response(1, build(codec.response_schema(1, version), fetch_values))
        decoded = fetch.FetchResponse[version].decode(framed, header=True, framed=True)
        assert decoded.responses[0][1][0][-1] == RECORDS and decoded.responses[0][1][0][2] == 9


def test_truncated_old_request_is_a_parse_error():
    kp = produce.ProduceRequest[1](1, 1000, (("t", ((0, RECORDS),)),))
    kp.with_header(correlation_id=1)
    frame = kp.encode(header=True)
    with pytest.raises(codec.RequestParseError):
        codec.decode_request(frame[:-5], _api(0), 1)


def test_a_lying_array_count_in_an_old_version_is_a_parse_error():
    """The length guard walks the wire class: a count past the bytes received never reaches kio."""
    kp = produce.ProduceRequest[0](1, 1000, ())
    kp.with_header(correlation_id=1)
    frame = kp.encode(header=True)
    with pytest.raises(codec.RequestParseError, match="array of 2147483647 elements"):
        codec.decode_request(frame[:-4] + b"\x7f\xff\xff\xff", _api(0), 0)


def test_version_range_joins_kio_and_derived_versions():
    assert old_versions.version_range(0) == (0, 13)
    assert old_versions.version_range(1) == (0, 18)
    assert old_versions.lowest_version(23) == 0
    assert old_versions.lowest_version(3) == 0  # Metadata: all in kio
    assert old_versions.version_range(7) == (0, 3)  # ControlledShutdown: declared, not in kio
    assert old_versions.version_range(56) == (0, 3)  # AlterPartition: v0-v1 derived, v2-v3 kio's
    assert old_versions.version_range(4) == (0, 7)  # LeaderAndIsr: declared, not in kio
    assert old_versions.version_range(6) == (0, 8)  # UpdateMetadata
    assert old_versions.version_range(5) == (0, 4)  # StopReplica
    assert old_versions.version_range(9999) is None  # neither kio nor a declaration
    assert old_versions.request_class(0, 3) is None  # kio has it


def test_a_derivation_naming_a_missing_field_fails_loudly():
    with pytest.raises(ValueError, match="no field"):
        derive(load_request_schema(0, 3), 2, Derivation(3, (Drop("topic_data.partition_data.nope", None),)))
    with pytest.raises(ValueError, match="no entity"):
        derive(load_request_schema(0, 3), 2, Derivation(3, (Add("nope.x", "int32", int, 0, None),)))



def _kp_names(schema) -> tuple:
    """kafka-python's field names in wire order, nested, `_ms` suffixes dropped as kio does."""
    out = []
    for name, field in zip(schema.names, schema.fields):
        inner = getattr(field, "array_of", field)
        name = name.removesuffix("_ms")
        if name == "tags":
            continue
        out.append((name, _kp_names(inner)) if isinstance(inner, Schema) else name)
    return tuple(out)


def _our_names(cls) -> tuple:
    subs = {name: sub for name, kind, sub in _build_plan(cls) if kind in ("entity", "entities")}
    return tuple((name, _our_names(subs[name])) if name in subs else name
                 for name in wire_class(cls).__dataclass_fields__)


def _same_names(ours, theirs) -> bool:
    if len(ours) != len(theirs):
        return False
    for mine, kp in zip(ours, theirs):
        if isinstance(mine, tuple) != isinstance(kp, tuple):
            return False
        if isinstance(mine, tuple):
            if not (_same_name(mine[0], kp[0]) and _same_names(mine[1], kp[1])):
                return False
        elif not _same_name(mine, kp):
            return False
    return True


def _same_name(mine: str, kp: str) -> bool:
    return mine.removesuffix("_ms") == kp  # kio names durations without kafka-python's `_ms`


@pytest.mark.parametrize("case", REQUESTS + RESPONSES, ids=_ID)
def test_field_names_match_kafka_python(case):
    """Wire order alone cannot tell two fields of one type apart (read_only / is_default): names can."""
    key, version, kp_cls, _ = case
    cls = (codec.request_schema if kp_cls.is_request() else codec.response_schema)(key, version)
    assert _same_names(_our_names(cls), _kp_names(kp_cls.SCHEMA)), (_our_names(cls), _kp_names(kp_cls.SCHEMA))


_OLD_REQUESTS = sorted({(key, version) for key, version, _, _ in REQUESTS})


@settings(max_examples=300, deadline=None, derandomize=True)
@given(api=st.sampled_from(_OLD_REQUESTS), body=st.binary(max_size=120))
def test_random_bodies_decode_or_fail_as_parse_errors(api, body):
    """Whatever the bytes, a derived version decodes or raises RequestParseError (Kafka closes the connection)."""
    key, version = api
    kp = REQUESTS[[c[:2] for c in REQUESTS].index(api)][2]
    header = kp.header_class()(api_key=key, api_version=version, correlation_id=1, client_id="z").encode()
    try:
        request = codec.decode_request(header + body, _api(key), version)
    except codec.RequestParseError:
        return
    assert type(request.body) is codec.request_schema(key, version)


def test_controlled_shutdown_v0_has_request_header_v0():
    """ControlledShutdownRequest.json: v0's header has no client id; kafka-python cannot send it."""
    cls = codec.request_schema(7, 0)
    framed = codec.encode_request(build(cls, {"broker_id": 3}), correlation_id=5, client_id="ignored")
    assert framed[4:] == bytes.fromhex("0007" "0000" "00000005" "00000003")
    request = codec.decode_request(framed[4:], _api(7), 0)
    assert (request.correlation_id, request.client_id, request.body.broker_id) == (5, None, 3)
    assert request.body.broker_epoch == -1  # BrokerEpoch 2+: Kafka's default
    v1 = codec.encode_request(build(codec.request_schema(7, 1), {"broker_id": 3}), correlation_id=5, client_id="c")
    assert v1[4:] == bytes.fromhex("0007" "0001" "00000005" "0001" "63" "00000003")  # header v1: client id "c"


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_controlled_shutdown_round_trips_with_the_handler_names(version):
    request = build(codec.request_schema(7, version), {"broker_id": 3, "broker_epoch": 42})
    decoded = codec.decode_request(codec.encode_request(request, 5, "c")[4:], _api(7), version)
    assert (decoded.header.correlation_id, decoded.body.broker_id) == (5, 3)
    assert decoded.body.broker_epoch == (42 if version >= 2 else -1)
    response = build(codec.response_schema(7, version), {"error_code": 0, "remaining_partitions": [
        {"topic_name": "t", "partition_index": 1}]})
    _, back = codec.decode_response(codec.encode_response(5, response)[4:], type(request))
    assert [(p.topic_name, p.partition_index) for p in back.remaining_partitions] == [("t", 1)]
    assert build(codec.response_schema(7, version), {"error_code": 35}).remaining_partitions == ()


@pytest.mark.parametrize("version", [0, 1])
def test_alter_partition_by_topic_name(version):
    """v0-v1 name topics (v2 uses ids); LeaderRecoveryState is on the wire from v1 only."""
    request = build(codec.request_schema(56, version), {"broker_id": 1, "topics": [{"topic_name": "t", "partitions": [
        {"partition_index": 0, "leader_epoch": 2, "new_isr": [1, 2], "leader_recovery_state": 1,
         "partition_epoch": 4}]}]})
    body = codec.decode_request(codec.encode_request(request, 5, "c")[4:], _api(56), version).body
    (p,) = body.topics[0].partitions
    assert (body.topics[0].topic_name, body.topics[0].topic_id, p.new_isr, p.partition_epoch) == ("t", None, (1, 2), 4)
    assert p.leader_recovery_state == version  # v0: Kafka's default 0, whatever was built


def test_update_metadata_v0_bytes_as_kafka_39_lays_them_out():
    """UpdateMetadataRequest.json v0: ungrouped partition states with their topic names, and live
    brokers with one host and port (V0Host, V0Port); declared here, kio has no ZooKeeper-mode apis."""
    request = build(codec.request_schema(6, 0), {
        "controller_id": 1, "controller_epoch": 2, "broker_epoch": 77, "ungrouped_partition_states": [{
            "topic_name": "t", "partition_index": 0, "controller_epoch": 2, "leader": 1, "leader_epoch": 3,
            "isr": [1], "zk_version": 4, "replicas": [1], "offline_replicas": [2]}],
        "live_brokers": [{"id": 1, "v0_host": "h", "v0_port": 9}]})
    framed = codec.encode_request(request, correlation_id=5, client_id="c")
    assert framed[4 + 11:] == bytes.fromhex(
        "00000001" "00000002"  # controller id, controller epoch (no broker epoch before v5)
        "00000001" "0001" "74" "00000000" "00000002" "00000001" "00000003"  # t-0, epochs, leader 1
        "00000001" "00000001" "00000004" "00000001" "00000001"  # isr [1], zk version 4, replicas [1]
        "00000001" "00000001" "0001" "68" "00000009")  # broker 1 at h:9


@pytest.mark.parametrize("key,versions", [(4, range(8)), (5, range(5)), (6, range(9))])
def test_controller_requests_round_trip_in_every_version(key, versions):
    """LeaderAndIsr, StopReplica, UpdateMetadata: what is encoded decodes to the same bytes again."""
    import uuid

    state = {"topic_name": "t", "partition_index": 1, "controller_epoch": 3, "leader": 2, "leader_epoch": 4,
             "isr": [1, 2], "partition_epoch": 7, "zk_version": 7, "replicas": [1, 2, 3], "adding_replicas": [3],
             "removing_replicas": [], "is_new": True, "leader_recovery_state": 0, "offline_replicas": [3]}
    for version in versions:
        request = build(codec.request_schema(key, version), {
            "controller_id": 1, "controller_epoch": 3, "broker_epoch": 99, "type": 1, "delete_partitions": True,
            "ungrouped_partition_states": [state], "ungrouped_partitions": [{"topic_name": "t", "partition_index": 1}],
            "topics": [{"name": "t", "partition_indexes": [1]}],
            "topic_states": [{"topic_name": "t", "topic_id": uuid.uuid4(), "partition_states": [
                state if key != 5 else {"partition_index": 1, "leader_epoch": 2, "delete_partition": True}]}],
            "live_leaders": [{"broker_id": 2, "host_name": "h", "port": 9}],
            "live_brokers": [{"id": 1, "v0_host": "h", "v0_port": 1, "rack": None, "endpoints": [
                {"port": 9, "host": "h", "listener": "PLAINTEXT", "security_protocol": 0}]}]})
        frame = codec.encode_request(request, 5, "c")[4:]
        decoded = codec.decode_request(frame, _api(key), version).body
        assert codec.encode_request(decoded, 5, "c")[4:] == frame, version
        assert decoded.controller_epoch == 3
        assert decoded.broker_epoch == (99 if version >= {4: 2, 5: 1, 6: 5}[key] else -1)
