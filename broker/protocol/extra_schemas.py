"""Message schemas kio 0.6.5 lacks, written in kio's own entity style from Kafka 3.9's
clients/src/main/resources/common/message/*.json, so codec, build and length_guard treat
them like any kio schema.

- ControlledShutdown (7) v0-v3 (kio has none): v0 uses request header v0 (no client id);
  v1-v2 header v1; v2 adds BrokerEpoch; v3 is flexible (header v2, response header v1).
- AlterPartition (56) v0-v1 (kio has v2+): topics by name instead of id; v1 adds
  LeaderRecoveryState to request and response partitions. Flexible from v0.
"""

import functools
from dataclasses import dataclass, field, make_dataclass
from typing import ClassVar

from kio.schema.errors import ErrorCode
from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as ResponseHeaderV1
from kio.static.constants import EntityType
from kio.static.primitive import i8, i16, i32, i32Timedelta, i64


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestHeaderV0:
    """Kafka's request header v0, used only by ControlledShutdown v0: no client id."""

    __type__: ClassVar = EntityType.header
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = False
    client_id: ClassVar[None] = None
    request_api_key: i16 = field(metadata={"kafka_type": "int16"})
    request_api_version: i16 = field(metadata={"kafka_type": "int16"})
    correlation_id: i32 = field(metadata={"kafka_type": "int32"})


def _meta(version: int, key: int, flexible: bool, header: type, kind) -> dict:
    return {"__type__": kind, "__version__": i16(version), "__flexible__": flexible, "__api_key__": i16(key),
            "__header_schema__": header}


def _entity(name: str, fields: list, ns: dict) -> type:
    return make_dataclass(name, fields, namespace=ns, frozen=True, slots=True, kw_only=True)


def _f(kafka_type: str, **kw):
    return field(metadata={"kafka_type": kafka_type}, **kw)


@functools.cache
def controlled_shutdown(version: int) -> tuple[type, type]:
    flexible = version >= 3
    req_header = RequestHeaderV0 if version == 0 else (RequestHeaderV2 if flexible else RequestHeaderV1)
    resp_header = ResponseHeaderV1 if flexible else ResponseHeaderV0
    req_fields = [("broker_id", i32, _f("int32"))]
    if version >= 2:
        req_fields.append(("broker_epoch", i64, _f("int64", default=i64(-1))))
    request = _entity("ControlledShutdownRequest", req_fields, _meta(version, 7, flexible, req_header, EntityType.request))
    nested = _meta(version, 7, flexible, resp_header, EntityType.nested)
    remaining = _entity("RemainingPartition", [("topic_name", str, _f("string")), ("partition_index", i32, _f("int32"))],
                        nested)
    response = _entity("ControlledShutdownResponse", [
        ("error_code", ErrorCode, _f("error_code")),
        ("remaining_partitions", tuple[remaining, ...], field(default=())),
    ], _meta(version, 7, flexible, resp_header, EntityType.response))
    return request, response


@functools.cache
def alter_partition(version: int) -> tuple[type, type]:
    req_ns = _meta(version, 56, True, RequestHeaderV2, EntityType.request)
    req_nested = {**req_ns, "__type__": EntityType.nested}
    partition_fields = [("partition_index", i32, _f("int32")), ("leader_epoch", i32, _f("int32")),
                        ("new_isr", tuple[i32, ...], _f("int32", default=()))]
    if version >= 1:
        partition_fields.append(("leader_recovery_state", i8, _f("int8", default=i8(0))))
    partition_fields.append(("partition_epoch", i32, _f("int32")))
    partition = _entity("PartitionData", partition_fields, req_nested)
    topic = _entity("TopicData", [("topic_name", str, _f("string")), ("partitions", tuple[partition, ...], field())],
                    req_nested)
    request = _entity("AlterPartitionRequest", [("broker_id", i32, _f("int32")),
                                                ("broker_epoch", i64, _f("int64", default=i64(-1))),
                                                ("topics", tuple[topic, ...], field())], req_ns)
    resp_ns = _meta(version, 56, True, ResponseHeaderV1, EntityType.response)
    resp_nested = {**resp_ns, "__type__": EntityType.nested}
    rp_fields = [("partition_index", i32, _f("int32")), ("error_code", ErrorCode, _f("error_code")),
                 ("leader_id", i32, _f("int32")), ("leader_epoch", i32, _f("int32")),
                 ("isr", tuple[i32, ...], _f("int32", default=()))]
    if version >= 1:
        rp_fields.append(("leader_recovery_state", i8, _f("int8", default=i8(0))))
    rp_fields.append(("partition_epoch", i32, _f("int32")))
    r_partition = _entity("PartitionData", rp_fields, resp_nested)
    r_topic = _entity("TopicData", [("topic_name", str, _f("string")), ("partitions", tuple[r_partition, ...], field())],
                      resp_nested)
    response = _entity("AlterPartitionResponse", [("throttle_time", i32Timedelta, _f("timedelta_i32")),
                                                  ("error_code", ErrorCode, _f("error_code")),
                                                  ("topics", tuple[r_topic, ...], field())], resp_ns)
    return request, response


def lookup(key: int, version: int) -> tuple[type, type] | None:
    """(request, response) schemas fauxka defines itself, or None (kio has it)."""
    if key == 7 and 0 <= version <= 3:
        return controlled_shutdown(version)
    if key == 56 and version in (0, 1):
        return alter_partition(version)
    return None
