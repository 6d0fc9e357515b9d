"""ControlledShutdown v0-v3 and AlterPartition v0-v1, which kio lacks, round-trip through the codec."""

import io

import pytest

from broker.protocol.api_table import TABLE
from broker.protocol.build import build
from broker.protocol.codec import (_writer, decode_request, decode_response, encode_request, encode_response,
                                   request_schema, response_schema)


def frame(request, version: int) -> bytes:
    if version == 0 and type(request).__api_key__ == 7:  # request header v0: no client id
        buf = io.BytesIO()
        header_cls = type(request).__header_schema__
        _writer(header_cls)(buf, header_cls(request_api_key=7, request_api_version=0, correlation_id=5))
        _writer(type(request))(buf, request)
        return buf.getvalue()
    return encode_request(request, 5, "c")[4:]


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_controlled_shutdown(version):
    request = build(request_schema(7, version), {"broker_id": 3, "broker_epoch": 42})
    decoded = decode_request(frame(request, version), TABLE[7], version)
    assert decoded.body.broker_id == 3 and getattr(decoded.body, "broker_epoch", 42) == 42
    assert decoded.header.correlation_id == 5
    response = build(response_schema(7, version), {"error_code": 0, "remaining_partitions": [
        {"topic_name": "t", "partition_index": 1}]})
    _, back = decode_response(encode_response(5, response)[4:], type(request))
    assert [(p.topic_name, p.partition_index) for p in back.remaining_partitions] == [("t", 1)]


@pytest.mark.parametrize("version", [0, 1])
def test_alter_partition_by_topic_name(version):
    request = build(request_schema(56, version), {"broker_id": 1, "topics": [{"topic_name": "t", "partitions": [
        {"partition_index": 0, "leader_epoch": 2, "new_isr": [1, 2], "leader_recovery_state": 0,
         "partition_epoch": 4}]}]})
    body = decode_request(frame(request, version), TABLE[56], version).body
    (p,) = body.topics[0].partitions
    assert (body.topics[0].topic_name, p.new_isr, p.partition_epoch) == ("t", (1, 2), 4)
    assert hasattr(p, "leader_recovery_state") == (version == 1)
