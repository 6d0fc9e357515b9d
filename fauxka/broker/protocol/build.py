"""Build kio entities of any version from plain values.

Handlers describe a response once, as nested dicts with the fields of the newest
version; `build` keeps the fields the requested version has and converts plain
ints into kio's error-code enum and duration types.
"""

import dataclasses
import datetime
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any

from kio.static.primitive import i32Timedelta, i64Timedelta

from fauxka.model.errors import ErrorCode

from . import kio_speed  # noqa: F401  (kio's phantom checks made cheap)


def _entity_in(tp: Any) -> type | None:
    """The kio entity class inside `tp` (X, X | None), if any."""
    if dataclasses.is_dataclass(tp):
        return tp
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        for arg in typing.get_args(tp):
            if dataclasses.is_dataclass(arg):
                return arg
    return None


@functools.cache
def _plan(cls: type) -> tuple[tuple[str, str, type | None], ...]:
    hints = typing.get_type_hints(cls)
    plan = []
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        kind, sub = "plain", None
        entity = _entity_in(tp)
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if entity is not None:
            kind, sub = "entity", entity
        elif inner and typing.get_origin(inner[0]) is tuple and _entity_in(typing.get_args(inner[0])[0]):
            kind, sub = "entities", _entity_in(typing.get_args(inner[0])[0])
        elif typing.get_origin(tp) is tuple and _entity_in(typing.get_args(tp)[0]):
            kind, sub = "entities", _entity_in(typing.get_args(tp)[0])
        elif tp is ErrorCode:
            kind = "error"
        elif tp in (i32Timedelta, i64Timedelta):
            kind, sub = "duration", tp
        plan.append((f.name, kind, sub))
    return tuple(plan)


def build(cls: type, values: Mapping[str, Any]) -> Any:
    """Construct `cls` from `values`, ignoring keys this version does not have."""
    kwargs = {}
    for name, kind, sub in _plan(cls):
        if name not in values:
            continue  # the dataclass default applies, or construction says what is missing
        value = values[name]
        if value is None:
            kwargs[name] = None
        elif kind == "entity":
            kwargs[name] = value if isinstance(value, sub) else build(sub, value)
        elif kind == "entities":
            kwargs[name] = tuple(v if isinstance(v, sub) else build(sub, v) for v in value)
        elif kind == "error":
            kwargs[name] = ErrorCode(int(value))
        elif kind == "duration":
            ms = value if isinstance(value, datetime.timedelta) else datetime.timedelta(milliseconds=value)
            kwargs[name] = sub.parse(ms)
        else:
            kwargs[name] = value
    return cls(**kwargs)


def entity_class(cls: type, *path: str) -> type:
    """The entity class of a nested field, e.g. entity_class(CreateTopicsResponse, "topics", "configs")."""
    for name in path:
        cls = next(sub for field, kind, sub in _plan(cls) if field == name and kind in ("entity", "entities"))
    return cls


# the fields Kafka's AbstractResponse.errorCounts counts (AddPartitionsToTxn v3 answers per
# partition in partition_error_code; CreateTopics' topic_config_error_code is not counted)
ERROR_FIELDS = frozenset(("error_code", "partition_error_code"))


def error_codes(entity: Any) -> set[int]:
    """Every error code anywhere in a response entity (Kafka's AbstractResponse.errorCounts)."""
    codes: set[int] = set()
    for name, kind, sub in _plan(type(entity)):
        value = getattr(entity, name)
        if name in ERROR_FIELDS:
            codes.add(int(value))
        elif kind == "entity" and value is not None and _may_hold_errors(sub):
            codes |= error_codes(value)
        elif kind == "entities" and value and _may_hold_errors(sub):
            for item in value:
                codes |= error_codes(item)
    return codes


@functools.cache
def _may_hold_errors(cls: type) -> bool:
    """Whether `cls` or an entity below it has an error_code (e.g. a topic's configs do not)."""
    return any(name in ERROR_FIELDS or (kind in ("entity", "entities") and _may_hold_errors(sub))
               for name, kind, sub in _plan(cls))


def field_names(cls: type) -> frozenset[str]:
    return frozenset(name for name, _, _ in _plan(cls))
