"""kio-shaped classes for apis kio 0.6.5 has no version of at all, declared from Kafka 3.9's JSON.

kio is generated from Kafka 4.x, which removed the ZooKeeper-mode inter-broker apis
(ControlledShutdown, LeaderAndIsr, StopReplica, UpdateMetadata). Where fauxka speaks one of them,
its schema is declared here field by field, the way Kafka's message JSON reads, and the classes
made are the same kind of frozen dataclass kio generates (same `kafka_type` metadata, same class
variables), so codec, build and the length guard treat them like any kio class.

ControlledShutdown v0 is the one request Kafka sends with request header v0, which has no client
id (ControlledShutdownRequest.json: "Version 0 ... has a non-standard request header which does
not include clientId"; Kafka's RequestHeader.apiVersion/headerVersion special-case it).
"""

import functools
import typing
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kio.schema.errors import ErrorCode
from kio.schema.types import BrokerId, TopicName
from kio.static.constants import EntityType
from kio.static.primitive import i8, i16, i32, i64

from .derive import Derivation, Drop, derive, header_for, make_entity


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestHeaderV0:
    """Kafka's request header v0: api key, api version, correlation id; no client id (reads as None)."""

    __type__: ClassVar = EntityType.header
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = False
    client_id: ClassVar[None] = None
    request_api_key: i16 = field(metadata={"kafka_type": "int16"})
    request_api_version: i16 = field(metadata={"kafka_type": "int16"})
    correlation_id: i32 = field(metadata={"kafka_type": "int32"})


_NONE: Any = type("NoDefault", (), {"__repr__": lambda self: "<required>"})()


@dataclass(frozen=True, slots=True)
class Field:
    """A primitive field: `kafka_type` as in kio's metadata ("int32", "string", ...)."""
    name: str
    kafka_type: str
    annotation: Any
    default: Any = _NONE
    versions: range = range(0, 1 << 15)  # Kafka's "versions": "2+" is range(2, 1 << 15)


@dataclass(frozen=True, slots=True)
class Struct:
    """An array of entities (Kafka's "[]Name" type)."""
    name: str
    class_name: str
    fields: tuple[Any, ...]
    versions: range = range(0, 1 << 15)


def declare(class_name: str, key: int, entity_type: EntityType, version: int, flexible: bool,
            fields: tuple[Field | Struct, ...]) -> type:
    """One class with every declared field, whatever its versions: the shape of every version."""
    return _entity(class_name, key, entity_type, version, flexible, header_for(entity_type, flexible), fields)


def _entity(name: str, key: int, entity_type: EntityType, version: int, flexible: bool, header: type,
            fields: tuple) -> type:
    specs = []
    for f in fields:
        if isinstance(f, Struct):
            sub = _entity(f.class_name, key, EntityType.nested, version, flexible, header, f.fields)
            specs.append((f.name, tuple[sub, ...], field(default=())))  # Kafka: an absent array is empty
        else:
            extra = {} if f.default is _NONE else {"default": f.default}
            specs.append((f.name, f.annotation, field(metadata={"kafka_type": f.kafka_type}, **extra)))
    return make_entity(name, entity_type, key, version, flexible, header, specs,
                       f"{name}, declared from Kafka 3.9's message JSON.")


@dataclass(frozen=True, slots=True)
class Declared:
    """An api as its two message JSON files read: names as in the JSON, in snake case."""
    name: str
    versions: range  # "validVersions"
    flexible_from: int  # "flexibleVersions": "3+" is 3
    request: tuple[Field | Struct, ...]
    response: tuple[Field | Struct, ...]
    header_v0: range = range(0)  # request versions sent with request header v0


def _since(first: int) -> range:
    return range(first, 1 << 15)


def _upto(last: int) -> range:
    return range(0, last + 1)


_SINCE_2 = _since(2)
_IDS = tuple[BrokerId, ...]  # Kafka's "[]int32" of broker ids

# LeaderAndIsrPartitionState (LeaderAndIsrRequest.json's common struct), used in two places
_LEADER_AND_ISR_PARTITION = (
    Field("topic_name", "string", TopicName, "", versions=_upto(1)),
    Field("partition_index", "int32", i32), Field("controller_epoch", "int32", i32),
    Field("leader", "int32", BrokerId), Field("leader_epoch", "int32", i32),
    Field("isr", "int32", _IDS, ()), Field("partition_epoch", "int32", i32), Field("replicas", "int32", _IDS, ()),
    Field("adding_replicas", "int32", _IDS, (), versions=_since(3)),
    Field("removing_replicas", "int32", _IDS, (), versions=_since(3)),
    Field("is_new", "bool", bool, False, versions=_since(1)),
    Field("leader_recovery_state", "int8", i8, 0, versions=_since(6)))
_LEADER_AND_ISR_ERROR = (Field("topic_name", "string", TopicName, "", versions=_upto(4)),
                         Field("partition_index", "int32", i32), Field("error_code", "error_code", ErrorCode))
# UpdateMetadataPartitionState
_UPDATE_METADATA_PARTITION = (
    Field("topic_name", "string", TopicName, "", versions=_upto(4)),
    Field("partition_index", "int32", i32), Field("controller_epoch", "int32", i32),
    Field("leader", "int32", BrokerId), Field("leader_epoch", "int32", i32),
    Field("isr", "int32", _IDS, ()), Field("zk_version", "int32", i32), Field("replicas", "int32", _IDS, ()),
    Field("offline_replicas", "int32", _IDS, (), versions=_since(4)))

DECLARED = {
    4: Declared("LeaderAndIsr", range(0, 8), 4, (
        Field("controller_id", "int32", BrokerId),
        Field("is_kraft_controller", "bool", bool, False, versions=_since(7)),
        Field("controller_epoch", "int32", i32),
        Field("broker_epoch", "int64", i64, -1, versions=_SINCE_2),
        Field("type", "int8", i8, 0, versions=_since(5)),
        Struct("ungrouped_partition_states", "LeaderAndIsrPartitionState", _LEADER_AND_ISR_PARTITION, _upto(1)),
        Struct("topic_states", "LeaderAndIsrTopicState", (
            Field("topic_name", "string", TopicName),
            Field("topic_id", "uuid", uuid.UUID | None, None, versions=_since(5)),
            Struct("partition_states", "LeaderAndIsrPartitionState", _LEADER_AND_ISR_PARTITION)), _SINCE_2),
        Struct("live_leaders", "LeaderAndIsrLiveLeader", (
            Field("broker_id", "int32", BrokerId), Field("host_name", "string", str), Field("port", "int32", i32)))),
        (Field("error_code", "error_code", ErrorCode),
         Struct("partition_errors", "LeaderAndIsrPartitionError", _LEADER_AND_ISR_ERROR, _upto(4)),
         Struct("topics", "LeaderAndIsrTopicError", (
             Field("topic_id", "uuid", uuid.UUID | None, None),
             Struct("partition_errors", "LeaderAndIsrPartitionError", _LEADER_AND_ISR_ERROR)), _since(5)))),
    5: Declared("StopReplica", range(0, 5), 2, (
        Field("controller_id", "int32", BrokerId),
        Field("is_kraft_controller", "bool", bool, False, versions=_since(4)),
        Field("controller_epoch", "int32", i32),
        Field("broker_epoch", "int64", i64, -1, versions=_since(1)),
        Field("delete_partitions", "bool", bool, False, versions=_upto(2)),
        Struct("ungrouped_partitions", "StopReplicaPartitionV0", (
            Field("topic_name", "string", TopicName), Field("partition_index", "int32", i32)), _upto(0)),
        Struct("topics", "StopReplicaTopicV1", (
            Field("name", "string", TopicName), Field("partition_indexes", "int32", tuple[i32, ...], ())),
            range(1, 3)),
        Struct("topic_states", "StopReplicaTopicState", (
            Field("topic_name", "string", TopicName),
            Struct("partition_states", "StopReplicaPartitionState", (
                Field("partition_index", "int32", i32), Field("leader_epoch", "int32", i32, -1),
                Field("delete_partition", "bool", bool, False)))), _since(3))),
        (Field("error_code", "error_code", ErrorCode),
         Struct("partition_errors", "StopReplicaPartitionError", (
             Field("topic_name", "string", TopicName), Field("partition_index", "int32", i32),
             Field("error_code", "error_code", ErrorCode))))),
    # UpdateMetadata v8's tagged field Type (0: unknown, 1: incremental, 2: full) is only set by a
    # KRaft controller during a ZooKeeper migration (KIP-866): not declared, so read as skipped.
    6: Declared("UpdateMetadata", range(0, 9), 6, (
        Field("controller_id", "int32", BrokerId),
        Field("is_kraft_controller", "bool", bool, False, versions=_since(8)),
        Field("controller_epoch", "int32", i32),
        Field("broker_epoch", "int64", i64, -1, versions=_since(5)),
        Struct("ungrouped_partition_states", "UpdateMetadataPartitionState", _UPDATE_METADATA_PARTITION, _upto(4)),
        Struct("topic_states", "UpdateMetadataTopicState", (
            Field("topic_name", "string", TopicName),
            Field("topic_id", "uuid", uuid.UUID | None, None, versions=_since(7)),
            Struct("partition_states", "UpdateMetadataPartitionState", _UPDATE_METADATA_PARTITION)), _since(5)),
        Struct("live_brokers", "UpdateMetadataBroker", (
            Field("id", "int32", BrokerId),
            Field("v0_host", "string", str, "", versions=_upto(0)),
            Field("v0_port", "int32", i32, 0, versions=_upto(0)),
            Struct("endpoints", "UpdateMetadataEndpoint", (
                Field("port", "int32", i32), Field("host", "string", str),
                Field("listener", "string", str, "", versions=_since(3)),
                Field("security_protocol", "int16", i16)), _since(1)),
            Field("rack", "string", str | None, None, versions=_since(2))))),
        (Field("error_code", "error_code", ErrorCode),)),
    7: Declared("ControlledShutdown", range(0, 4), 3,
           (Field("broker_id", "int32", BrokerId), Field("broker_epoch", "int64", i64, -1, versions=_SINCE_2)),
           (Field("error_code", "error_code", ErrorCode),
            Struct("remaining_partitions", "RemainingPartition",
                   (Field("topic_name", "string", TopicName), Field("partition_index", "int32", i32)))),
           header_v0=range(0, 1)),
}


@functools.cache
def declared_class(key: int, version: int, entity_type: EntityType) -> type | None:
    api = DECLARED.get(key)
    if api is None or version not in api.versions:
        return None
    is_request = entity_type is EntityType.request
    fields = api.request if is_request else api.response
    highest = api.versions[-1]
    every = declare(api.name + ("Request" if is_request else "Response"), key, entity_type, highest,
                    highest >= api.flexible_from, fields)
    header = RequestHeaderV0 if is_request and version in api.header_v0 else None
    # each version: every field, minus those it lacks on the wire, which keep their defaults
    return derive(every, version, Derivation(highest, tuple(_drops(fields, version, "")),
                                             flexible=version >= api.flexible_from, header=header))


_ZERO = {"int8": 0, "int16": 0, "int32": 0, "int64": 0, "string": "", "bool": False, "bytes": b"",
         "error_code": ErrorCode.none, "uuid": None}


def _drops(fields: tuple, version: int, path: str):
    for f in fields:
        if version not in f.versions:  # Kafka's Java message keeps the default (or zero) for an absent field
            array = isinstance(f, Struct) or typing.get_origin(f.annotation) is tuple
            default = () if array else _ZERO[f.kafka_type] if f.default is _NONE else f.default
            yield Drop(path + f.name, default)
        elif isinstance(f, Struct):
            yield from _drops(f.fields, version, f"{path}{f.name}.")


def declared_versions(key: int) -> range:
    api = DECLARED.get(key)
    return range(0) if api is None else api.versions
