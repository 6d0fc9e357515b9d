"""kio-shaped classes for apis kio 0.6.5 has no version of at all, declared from Kafka 3.9's JSON.

kio is generated from Kafka 4.x, which removed the ZooKeeper-mode inter-broker apis
(ControlledShutdown, LeaderAndIsr, StopReplica, UpdateMetadata). Where fauxka speaks one of them,
its schema is declared here field by field, the way Kafka's message JSON reads, and the classes
made are the same kind of frozen dataclass kio generates (same `kafka_type` metadata, same class
variables), so codec, build and the length guard treat them like any kio class.
"""

import functools
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode
from kio.schema.types import BrokerId, TopicName
from kio.static.constants import EntityType
from kio.static.primitive import i32, i64

from .derive import Derivation, Drop, derive, header_for, make_entity

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
            specs.append((f.name, tuple[sub, ...], field()))
        else:
            extra = {} if f.default is _NONE else {"default": f.default}
            specs.append((f.name, f.annotation, field(metadata={"kafka_type": f.kafka_type}, **extra)))
    return make_entity(name, entity_type, key, version, flexible, header, specs,
                       f"{name}, declared from Kafka 3.9's message JSON.")


_SINCE_2 = range(2, 1 << 15)

# key -> (lowest, highest, flexible from, request fields, response fields); names as in the JSON
DECLARED = {
    7: ("ControlledShutdown", 1, 3, 3,  # v0 uses request header v0 (no client id): not declared
        (Field("broker_id", "int32", BrokerId), Field("broker_epoch", "int64", i64, -1, versions=_SINCE_2)),
        (Field("error_code", "error_code", ErrorCode),
         Struct("remaining_partitions", "RemainingPartition",
                (Field("topic_name", "string", TopicName), Field("partition_index", "int32", i32))))),
}


@functools.cache
def declared_class(key: int, version: int, entity_type: EntityType) -> type | None:
    entry = DECLARED.get(key)
    if entry is None or not entry[1] <= version <= entry[2]:
        return None
    name, _, highest, flexible_from, request, response = entry
    is_request = entity_type is EntityType.request
    fields = request if is_request else response
    every = declare(name + ("Request" if is_request else "Response"), key, entity_type, highest,
                    highest >= flexible_from, fields)
    # each version: every field, minus those it lacks on the wire, which keep their defaults
    return derive(every, version, Derivation(highest, tuple(_drops(fields, version, "")),
                                             flexible=version >= flexible_from))


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
    entry = DECLARED.get(key)
    return range(0) if entry is None else range(entry[1], entry[2] + 1)
