"""kio-shaped classes for api versions kio does not ship, derived from the nearest version it does.

kio 0.6.5 is generated from Kafka 4.x, which dropped the versions KIP-896 retired (Produce
v0-v2, Fetch v0-v3, ...). Kafka 3.9 still serves them, and their wire formats differ from the
nearest kio version by a few fields (Kafka's message JSON, e.g. ProduceRequest.json:
`"TransactionalId", "versions": "3+"`). A `Derivation` names the kio version it starts from
and the field changes, by dotted path:

* `Drop(path, default)`: a field of the kio version this version does not carry. It stays on
  the derived class with `default` (Kafka's JSON default), so a handler written against kio's
  class reads the same attribute for every version; it is never read from or written to the wire.
* `Add(path, kafka_type, annotation, default, after)`: a field only this version carries
  (e.g. ListOffsets v0's `old_style_offsets`), placed after the field named `after`.

Each derived entity is two dataclasses: the public one (kio's fields + added fields, the shape
handlers see and `build` fills) and a wire one (public minus dropped fields) that kio's own
reader and writer serialize. `wire_class`, `to_public` and `to_wire` convert between them.
"""

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any

from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.request_header.v2.header import RequestHeader as RequestHeaderV2
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as ResponseHeaderV1
from kio.static.constants import EntityType
from kio.static.primitive import i16

_NO_DEFAULT: Any = type("NoDefault", (), {"__repr__": lambda self: "<kio default>"})()
REQUIRED: Any = _NO_DEFAULT  # an Add without a default: build must be given it


@dataclass(frozen=True, slots=True)
class Drop:
    path: str
    default: Any = _NO_DEFAULT  # kio's default for the field unless given


@dataclass(frozen=True, slots=True)
class Add:
    path: str
    kafka_type: str
    annotation: Any
    default: Any
    after: str | None  # the field it follows; None: first


@dataclass(frozen=True, slots=True)
class Derivation:
    base: int  # the kio version it starts from
    changes: tuple[Drop | Add, ...] = ()
    flexible: bool | None = None  # None: as the base version
    header: type | None = None  # None: the header kio pairs with that flexibility (see header_for)


# public class -> (wire class, plan); classes derived without changes are their own wire class
_WIRE: dict[type, type] = {}


def derive(base_cls: type, version: int, derivation: Derivation) -> type:
    """The public class of `version`, derived from `base_cls` (a kio class, or one declare.py made)."""
    flexible = base_cls.__flexible__ if derivation.flexible is None else derivation.flexible
    header = derivation.header or _header(base_cls, flexible)
    changes: dict[str, list] = {}
    for change in derivation.changes:
        parent, _, name = change.path.rpartition(".")
        changes.setdefault(parent, []).append((name, change))
    public, _ = _copy(base_cls, "", changes, version, flexible, header)
    leftover = set(changes) - _seen_paths(base_cls, "")
    if leftover:
        raise ValueError(f"{base_cls.__name__} v{version}: no entity at {sorted(leftover)}")
    return public


def _header(base_cls: type, flexible: bool) -> type:
    if flexible == base_cls.__flexible__:
        return base_cls.__header_schema__
    return header_for(base_cls.__type__, flexible)


def header_for(entity_type: EntityType, flexible: bool) -> type:
    """The header kio pairs with a request or response of that flexibility (Kafka's v1/v2, v0/v1)."""
    if entity_type is EntityType.request:
        return RequestHeaderV2 if flexible else RequestHeaderV1
    return ResponseHeaderV1 if flexible else ResponseHeaderV0


def _seen_paths(cls: type, path: str) -> set[str]:
    seen = {path}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        sub = _entity_in(hints[f.name])
        if sub is not None:
            seen |= _seen_paths(sub, _join(path, f.name))
    return seen


def _copy(cls: type, path: str, changes: dict, version: int, flexible: bool, header: type) -> tuple[type, bool]:
    """(public class, whether it or an entity below it differs on the wire from kio's)."""
    hints = typing.get_type_hints(cls)
    mine = dict(changes.get(path, ()))
    public_fields, wire_names, changed = [], [], bool(mine) or flexible != cls.__flexible__
    for name, change in mine.items():
        if isinstance(change, Add) and change.after is None:
            public_fields.append(_added(change, name))
            wire_names.append(name)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        sub = _entity_in(tp)
        if sub is not None:
            sub_public, sub_changed = _copy(sub, _join(path, f.name), changes, version, flexible, header)
            tp = _replace(tp, sub, sub_public)
            changed |= sub_changed
        if "tag" in f.metadata and not flexible and not isinstance(mine.get(f.name), Drop):
            raise ValueError(f"tagged field {cls.__name__}.{f.name} in non-flexible v{version}: drop it")
        change = mine.get(f.name)
        if isinstance(change, Drop):
            public_fields.append((f.name, tp, _dropped(f, change)))
        else:
            public_fields.append((f.name, tp, _field_like(f)))
            wire_names.append(f.name)
        for name, add in mine.items():
            if isinstance(add, Add) and add.after == f.name:
                public_fields.append(_added(add, name))
                wire_names.append(name)
    missing = {n for n, c in mine.items() if isinstance(c, Drop)} - {f.name for f in dataclasses.fields(cls)}
    missing |= {c.after for c in mine.values() if isinstance(c, Add) and c.after is not None} - \
        {f.name for f in dataclasses.fields(cls)}
    if missing:
        raise ValueError(f"{cls.__name__} has no field(s) {sorted(missing)}")
    public = _make(cls, public_fields, version, flexible, header)
    if not changed:
        _WIRE[public] = public
        return public, False
    wire_fields = [spec for spec in public_fields if spec[0] in wire_names]
    wire = _make(cls, [(n, _wire_type(tp), f) for n, tp, f in wire_fields], version, flexible, header)
    _WIRE[public] = wire
    return public, True


def _wire_type(tp: Any) -> Any:
    sub = _entity_in(tp)
    return tp if sub is None else _replace(tp, sub, _WIRE[sub])


def _dropped(f: dataclasses.Field, drop: Drop) -> dataclasses.Field:
    if drop.default is not _NO_DEFAULT:
        return dataclasses.field(metadata=f.metadata, default=drop.default)
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
        raise ValueError(f"dropped field {f.name} has no kio default: give one")
    return _field_like(f)


def _added(add: Add, name: str) -> tuple:
    extra = {} if add.default is _NO_DEFAULT else {"default": add.default}
    return name, add.annotation, dataclasses.field(metadata={"kafka_type": add.kafka_type}, **extra)


def _field_like(f: dataclasses.Field) -> dataclasses.Field:
    extra = {}
    if f.default is not dataclasses.MISSING:
        extra["default"] = f.default
    elif f.default_factory is not dataclasses.MISSING:
        extra["default_factory"] = f.default_factory
    return dataclasses.field(metadata=f.metadata, **extra)


def _make(cls: type, fields: list, version: int, flexible: bool, header: type) -> type:
    return make_entity(cls.__name__, cls.__type__, cls.__api_key__, version, flexible, header, fields,
                       f"{cls.__name__} v{version}, derived from v{cls.__version__}.")


def make_entity(name: str, entity_type: EntityType, api_key: int, version: int, flexible: bool, header: type,
                fields: list, doc: str) -> type:
    """A dataclass kio's reader and writer accept: `fields` as for dataclasses.make_dataclass."""
    namespace = {"__type__": entity_type, "__version__": i16(version), "__flexible__": flexible,
                 "__api_key__": i16(api_key), "__header_schema__": header, "__module__": __name__,
                 "__doc__": doc}
    return dataclasses.make_dataclass(name, fields, namespace=namespace, frozen=True, slots=True, kw_only=True)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _entity_in(tp: Any) -> type | None:
    """The entity class in X, X | None, tuple[X, ...] or tuple[X, ...] | None."""
    if dataclasses.is_dataclass(tp):
        return tp
    for arg in typing.get_args(tp):
        found = _entity_in(arg) if arg is not Ellipsis else None
        if found is not None:
            return found
    return None


def _replace(tp: Any, old: type, new: type) -> Any:
    if tp is old:
        return new
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if not args:
        return tp
    args = tuple(a if a is Ellipsis else _replace(a, old, new) for a in args)
    if origin in (types.UnionType, typing.Union):
        return functools.reduce(lambda a, b: a | b, args)
    return origin[args]


def wire_class(cls: type) -> type:
    """The class kio serializes for `cls`: itself unless `cls` was derived with dropped fields."""
    return _WIRE.get(cls, cls)


@functools.cache
def _plan(cls: type) -> tuple[tuple[str, type | None, bool], ...]:
    """(field, public entity class or None, is-array) for each wire field of public class `cls`."""
    hints = typing.get_type_hints(wire_class(cls))
    public_hints = typing.get_type_hints(cls)
    plan = []
    for f in dataclasses.fields(wire_class(cls)):
        sub = _entity_in(public_hints[f.name])
        if sub is not None and wire_class(sub) is sub and not _nested_changes(sub):
            sub = None  # identical on the wire and in public: no conversion below
        is_array = typing.get_origin(hints[f.name]) is tuple or any(
            typing.get_origin(a) is tuple for a in typing.get_args(hints[f.name]))
        plan.append((f.name, sub, is_array))
    return tuple(plan)


@functools.cache
def _nested_changes(cls: type) -> bool:
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        sub = _entity_in(hints[f.name])
        if sub is not None and (wire_class(sub) is not sub or _nested_changes(sub)):
            return True
    return False


def to_public(cls: type, wire_obj: Any) -> Any:
    """The public `cls` instance for an instance of its wire class; dropped fields get their defaults."""
    if wire_obj is None:
        return None
    kwargs = {}
    for name, sub, is_array in _plan(cls):
        value = getattr(wire_obj, name)
        if sub is not None and value is not None:
            value = tuple(to_public(sub, v) for v in value) if is_array else to_public(sub, value)
        kwargs[name] = value
    return cls(**kwargs)


def to_wire(obj: Any) -> Any:
    """The wire-class instance for a public instance: dropped fields left out."""
    cls = type(obj)
    wire = wire_class(cls)
    if wire is cls and not _nested_changes(cls):
        return obj
    kwargs = {}
    for name, sub, is_array in _plan(cls):
        value = getattr(obj, name)
        if sub is not None and value is not None:
            value = tuple(to_wire(v) for v in value) if is_array else to_wire(value)
        kwargs[name] = value
    return wire(**kwargs)
