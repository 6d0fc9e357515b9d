import ipaddress

import pytest

from fauxka.broker.handlers.envelope import _forwarding_broker
from fauxka.broker.protocol import api_table
from fauxka.broker.protocol.build import build, error_codes
from fauxka.broker.protocol.codec import decode_request, encode_request, peek, request_schema, response_schema
from fauxka.broker.protocol.principal import PrincipalDeserializationError, deserialize_principal, serialize_principal


def test_principal_golden_bytes_from_kafka():
    assert serialize_principal("User:alice") == bytes.fromhex("0000055573657206616c69636500 00".replace(" ", ""))
    assert deserialize_principal(bytes.fromhex("000005557365720661 6c6963650000".replace(" ", ""))) == "User:alice"


def test_principal_round_trip_and_refusals():
    assert deserialize_principal(serialize_principal("User:CN=broker,O=x")) == "User:CN=broker,O=x"
    with pytest.raises(PrincipalDeserializationError):
        deserialize_principal(b"\x00\x01" + serialize_principal("User:a")[2:])  # version 1
    for bad in (None, b"", b"\x00", b"\x00\x00\xff"):
        with pytest.raises(PrincipalDeserializationError):
            deserialize_principal(bad)


def test_envelope_wraps_the_original_request_bytes_unchanged():
    inner = build(request_schema(19, 7), {"topics": [], "timeout": 1000, "validate_only": True})
    frame = encode_request(inner, correlation_id=77, client_id="client")[4:]
    envelope = build(request_schema(58, 0), {"request_data": frame, "request_principal": serialize_principal("User:bob"),
                                             "client_host_address": ipaddress.ip_address("10.0.0.7").packed})
    outer = encode_request(envelope, correlation_id=5, client_id="fauxka-forwarder-2")[4:]
    parsed = decode_request(outer, api_table.lookup(58), 0)
    assert parsed.body.request_data == frame
    assert peek(parsed.body.request_data) == (19, 7, 77)
    assert str(ipaddress.ip_address(parsed.body.client_host_address)) == "10.0.0.7"
    assert _forwarding_broker(parsed.client_id) == 2
    assert _forwarding_broker("someone-else") == -1


def test_error_codes_are_found_anywhere_in_a_response():
    response = build(response_schema(19, 7), {"throttle_time": 0, "topics": [
        {"name": "a", "topic_id": None, "error_code": 0, "error_message": None, "topic_config_error_code": 0,
         "num_partitions": 1, "replication_factor": 1, "configs": ()},
        {"name": "b", "topic_id": None, "error_code": 41, "error_message": None, "topic_config_error_code": 0,
         "num_partitions": -1, "replication_factor": -1, "configs": ()}]})
    assert error_codes(response) == {0, 41}


def test_error_codes_two_levels_down():
    response = build(response_schema(31, 3), {"throttle_time": 0, "filter_results": [
        {"error_code": 0, "error_message": None, "matching_acls": [
            {"error_code": 41, "error_message": None, "resource_type": 2, "resource_name": "t",
             "pattern_type": 3, "principal": "User:a", "host": "*", "operation": 2, "permission_type": 3}]}]})
    assert error_codes(response) == {0, 41}


def test_error_codes_include_partition_error_codes():
    """AddPartitionsToTxn v3 answers per partition in partition_error_code (Kafka's errorCounts counts them)."""
    response = build(response_schema(24, 3), {"throttle_time": 0, "results_by_topic_v3_and_below": [
        {"name": "t", "results_by_partition": [{"partition_index": 0, "partition_error_code": 0},
                                               {"partition_index": 1, "partition_error_code": 16}]}]})
    assert error_codes(response) == {0, 16}
