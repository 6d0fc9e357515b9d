"""kafka-python structs for Kafka 3.9 versions kafka-python does not describe (or describes wrongly),
written from Kafka 3.9.0's clients/src/main/resources/common/message/*.json with kafka-python's
own primitives, for tests/unit/test_old_versions.py."""

from kafka.protocol.old.api import Request, Response
from kafka.protocol.old.types import (Array, Boolean, Bytes, CompactArray, CompactString, Int8, Int16, Int32, Int64,
                                      Schema, String, TaggedFields)

_STR = String("utf-8")
_PRINCIPAL = (("principal_type", _STR), ("principal_name", _STR))


def _struct(base, key, version, *fields, flexible=False):
    return type(f"{base.__name__}{key}v{version}", (base,), {
        "API_KEY": key, "API_VERSION": version, "SCHEMA": Schema(*fields), "FLEXIBLE_VERSION": flexible})


WRITE_TXN_MARKERS_V0 = (
    _struct(Request, 27, 0, ("markers", Array(
        ("producer_id", Int64), ("producer_epoch", Int16), ("transaction_result", Boolean),
        ("topics", Array(("name", _STR), ("partition_indexes", Array(Int32)))),
        ("coordinator_epoch", Int32)))),
    _struct(Response, 27, 0, ("markers", Array(
        ("producer_id", Int64),
        ("topics", Array(("name", _STR), ("partitions", Array(("partition_index", Int32),
                                                               ("error_code", Int16)))))))))
# kafka-python's DescribeLogDirsRequest_v0 has `partitions` as one int32, not an array
DESCRIBE_LOG_DIRS_REQUEST_V0 = _struct(Request, 35, 0, ("topics", Array(("topic", _STR),
                                                                          ("partitions", Array(Int32)))))
ALTER_REPLICA_LOG_DIRS_V0 = (
    _struct(Request, 34, 0, ("dirs", Array(("path", _STR), ("topics", Array(("name", _STR),
                                                                          ("partitions", Array(Int32))))))),
    _struct(Response, 34, 0, ("throttle_time_ms", Int32), ("results", Array(
        ("topic_name", _STR), ("partitions", Array(("partition_index", Int32), ("error_code", Int16)))))))
CREATE_DELEGATION_TOKEN_V0 = (
    _struct(Request, 38, 0, ("renewers", Array(*_PRINCIPAL)), ("max_lifetime_ms", Int64)),
    _struct(Response, 38, 0, ("error_code", Int16), *_PRINCIPAL, ("issue_timestamp_ms", Int64),
            ("expiry_timestamp_ms", Int64), ("max_timestamp_ms", Int64), ("token_id", _STR),
            ("hmac", Bytes), ("throttle_time_ms", Int32)))
RENEW_DELEGATION_TOKEN_V0 = (
    _struct(Request, 39, 0, ("hmac", Bytes), ("renew_period_ms", Int64)),
    _struct(Response, 39, 0, ("error_code", Int16), ("expiry_timestamp_ms", Int64), ("throttle_time_ms", Int32)))
EXPIRE_DELEGATION_TOKEN_V0 = (
    _struct(Request, 40, 0, ("hmac", Bytes), ("expiry_time_period_ms", Int64)),
    _struct(Response, 40, 0, ("error_code", Int16), ("expiry_timestamp_ms", Int64), ("throttle_time_ms", Int32)))
DESCRIBE_DELEGATION_TOKEN_V0 = (
    _struct(Request, 41, 0, ("owners", Array(*_PRINCIPAL))),
    _struct(Response, 41, 0, ("error_code", Int16), ("tokens", Array(
        *_PRINCIPAL, ("issue_timestamp", Int64), ("expiry_timestamp", Int64), ("max_timestamp", Int64),
        ("token_id", _STR), ("hmac", Bytes), ("renewers", Array(*_PRINCIPAL)))), ("throttle_time_ms", Int32)))
_TAGS = ("tags", TaggedFields)
CONTROLLED_SHUTDOWN = {  # ControlledShutdownRequest.json / ControlledShutdownResponse.json, flexible 3+
    1: (_struct(Request, 7, 1, ("broker_id", Int32)),
        _struct(Response, 7, 1, ("error_code", Int16),
                ("remaining_partitions", Array(("topic_name", _STR), ("partition_index", Int32))))),
    2: (_struct(Request, 7, 2, ("broker_id", Int32), ("broker_epoch", Int64)),
        _struct(Response, 7, 2, ("error_code", Int16),
                ("remaining_partitions", Array(("topic_name", _STR), ("partition_index", Int32))))),
    3: (_struct(Request, 7, 3, ("broker_id", Int32), ("broker_epoch", Int64), _TAGS, flexible=True),
        _struct(Response, 7, 3, ("error_code", Int16), ("remaining_partitions", CompactArray(
            ("topic_name", CompactString("utf-8")), ("partition_index", Int32), _TAGS)), _TAGS, flexible=True)),
}


def _alter_partition_partition(version: int, *fields):
    return ("partitions", CompactArray(("partition_index", Int32), *fields,
                                       *((("leader_recovery_state", Int8),) if version else ()),
                                       ("partition_epoch", Int32), _TAGS))


ALTER_PARTITION = {  # AlterPartitionRequest.json / AlterPartitionResponse.json: flexible 0+, TopicName 0-1
    v: (_struct(Request, 56, v, ("broker_id", Int32), ("broker_epoch", Int64), ("topics", CompactArray(
            ("topic_name", CompactString("utf-8")),
            _alter_partition_partition(v, ("leader_epoch", Int32), ("new_isr", CompactArray(Int32))), _TAGS)),
            _TAGS, flexible=True),
        _struct(Response, 56, v, ("throttle_time_ms", Int32), ("error_code", Int16), ("topics", CompactArray(
            ("topic_name", CompactString("utf-8")),
            _alter_partition_partition(v, ("error_code", Int16), ("leader_id", Int32), ("leader_epoch", Int32),
                                       ("isr", CompactArray(Int32))), _TAGS)),
            _TAGS, flexible=True))
    for v in (0, 1)}
