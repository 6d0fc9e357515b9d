"""kio's entity writer with a cheaper walk over the entity, the same bytes.

kio's `entity_writer` loops over a dict of (field, writer) per entity and, for a flexible entity,
opens a BytesIO for its tagged fields even when there are none to write, then writes their
count through a checked `uvarint(...)`; arrays go through the same checked lengths. For the
small entities that make most answers (a Produce answer is 4 of them) that walk cost more than
the values it wrote. Here:

- every primitive field (and array of primitives) is written by kio's own field writer
  (`kio.serial._serialize.get_field_writer`): the encoding of values stays kio's;
- entities, nullable entities (KIP-893's int8 marker) and arrays of entities are walked here,
  with array lengths written from a table of one-byte varints;
- a flexible entity whose tagged fields all hold their defaults (nearly always) writes kio's
  empty tag section, one 0 byte; one with a tag to write is written whole by kio's writer.

tests/unit/test_fast_writer.py checks the bytes against kio's for every message class kio ships.
"""

import functools
import io
import struct
from dataclasses import MISSING, fields

from kio.serial import entity_writer as kio_entity_writer
from kio.serial._implicit_defaults import get_tagged_field_default
from kio.serial._introspect import EntityField, EntityTupleField, classify_field, get_field_tag, is_optional
from kio.serial._serialize import get_field_writer
from kio.static.primitive import i32

_VARINT_1 = tuple(bytes((n,)) for n in range(128))
_NO_TAGS = b"\x00"
_NULL_ENTITY, _ENTITY = b"\xff", b"\x01"  # kio.serial._shared.NullableEntityMarker null / not_null
_I32 = struct.Struct(">i")
_NULL_ARRAY = _I32.pack(-1)


def _uvarint(value: int) -> bytes:
    if value < 128:
        return _VARINT_1[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@functools.cache
def entity_writer(cls: type, nullable: bool = False):
    """writer(buffer, entity) for kio entity class `cls`, bytes for bytes kio's own."""
    flexible = cls.__flexible__
    header = cls.__name__ == "RequestHeader"
    plain, tagged = [], []
    for f in fields(cls):
        tag = get_field_tag(f)
        writer = _field_writer(f, flexible, header, tag is not None)
        if tag is None:
            plain.append((f.name, writer))
        else:
            tagged.append((f.name, f.default, get_tagged_field_default(f)))
    plain = tuple(plain)

    if not flexible:
        def write(buffer, entity) -> None:
            for name, writer in plain:
                writer(buffer, getattr(entity, name))
    elif not tagged:
        def write(buffer, entity) -> None:
            for name, writer in plain:
                writer(buffer, getattr(entity, name))
            buffer.write(_NO_TAGS)
    else:
        kio_write = kio_entity_writer(cls)
        tagged = tuple(tagged)

        def write(buffer, entity) -> None:
            for name, default, implicit in tagged:  # kio's test for "a tag to write"
                value = getattr(entity, name)
                if not (value == default or (default == MISSING and value == implicit)):
                    kio_write(buffer, entity)
                    return
            for name, writer in plain:
                writer(buffer, getattr(entity, name))
            buffer.write(_NO_TAGS)

    if cls.__name__ in _KEPT_BYTES:
        write = _keeping_bytes(write)
    if not nullable:
        return write

    def write_nullable(buffer, entity) -> None:
        if entity is None:
            buffer.write(_NULL_ENTITY)
            return
        buffer.write(_ENTITY)
        write(buffer, entity)
    return write_nullable


# Entities a handler keeps and answers again unchanged (handlers/metadata.py's per-topic memo): their
# bytes are kept with them, by identity (the entity is held, so its id is not reused; kio entities
# are immutable), and written again without walking thousands of partitions per request.
_KEPT_BYTES = frozenset(("MetadataResponseTopic",))
_KEPT_LIMIT = 10000


def _keeping_bytes(write):
    kept: dict[int, tuple[object, bytes]] = {}

    def write_kept(buffer, entity) -> None:
        held = kept.get(id(entity))
        if held is None or held[0] is not entity:
            own = io.BytesIO()
            write(own, entity)
            if len(kept) >= _KEPT_LIMIT:
                kept.clear()
            held = kept[id(entity)] = (entity, own.getvalue())
        buffer.write(held[1])
    return write_kept


def _field_writer(f, flexible: bool, header: bool, is_tag: bool):
    kind = classify_field(f)
    if isinstance(kind, EntityField):
        return entity_writer(kind.type_, nullable=not is_tag and is_optional(f))
    if isinstance(kind, EntityTupleField):
        return _array_writer(entity_writer(kind.type_), flexible)
    return get_field_writer(f, flexible=flexible, is_request_header=header, is_tag=is_tag)


def _array_writer(item_writer, flexible: bool):
    if flexible:
        def write_compact_array(buffer, items) -> None:
            if items is None:
                buffer.write(_VARINT_1[0])
                return
            buffer.write(_uvarint(len(items) + 1))
            for item in items:
                item_writer(buffer, item)
        return write_compact_array

    def write_legacy_array(buffer, items) -> None:
        if items is None:
            buffer.write(_NULL_ARRAY)
            return
        buffer.write(_I32.pack(i32(len(items))))
        for item in items:
            item_writer(buffer, item)
    return write_legacy_array
