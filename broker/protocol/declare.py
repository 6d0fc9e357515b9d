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
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kio.schema.errors import ErrorCode
from kio.schema.types import BrokerId, TopicName
from kio.static.constants import EntityType
from kio.static.primitive import i16, i32, i64

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


_SINCE_2 = range(2, 1 << 15)

DECLARED = {
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
         "error_code": ErrorCode.none}


def _drops(fields: tuple, version: int, path: str):
    for f in fields:
        if version not in f.versions:  # Kafka's Java message keeps the default (or zero) for an absent field
            default = () if isinstance(f, Struct) else _ZERO[f.kafka_type] if f.default is _NONE else f.default
            yield Drop(path + f.name, default)
        elif isinstance(f, Struct):
            yield from _drops(f.fields, version, f"{path}{f.name}.")


def declared_versions(key: int) -> range:
    api = DECLARED.get(key)
    return range(0) if api is None else api.versions
