"""A walk over a request's lengths before kio's native reader parses it.

kio 0.6.5's native reader reserves memory for an array's element count before it
reads the elements; a compact array count past 2**31 (a 5-byte varint) makes it
reserve tens of gigabytes and the process aborts (found by tests/integration/test_fuzz.py).
So every array and tagged-field length in a request is first read with kio's own
primitive readers and checked against the bytes actually received: each element
takes at least one byte. Only lengths are checked here; kio still does the parsing.
"""

import functools
from dataclasses import fields

from kio.serial._introspect import (EntityField, EntityTupleField, PrimitiveField, PrimitiveTupleField,
                                    classify_field, get_field_tag, get_schema_field_type, is_optional)
from kio.serial._parse import get_field_reader, get_reader
from kio.serial.readers import read_compact_array_length, read_int8, read_legacy_array_length, read_unsigned_varint


class LengthError(ValueError):
    pass


# Fixed-width primitives are stepped over, not read (their bytes are checked to be there at the
# end of their entity); only the lengths of strings, bytes, records, arrays and tags are read.
_FIXED = {"bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "int64": 8, "float64": 8, "uuid": 16,
          "timedelta_i32": 4, "timedelta_i64": 8}


def check_lengths(cls: type, data: bytes, offset: int = 0) -> int:
    """Walk one entity of `cls` at `offset`; the offset after it. Raises LengthError or kio's errors."""
    for step in _plan(cls):
        offset = step(data, offset)
    if offset > len(data):
        raise LengthError(f"{cls.__name__} ends at byte {offset} of {len(data)}")
    return offset


@functools.cache
def _plan(cls: type) -> tuple:
    flexible = cls.__flexible__
    header = cls.__name__ == "RequestHeader"
    steps, tagged, width = [], {}, 0
    for f in fields(cls):
        tag = get_field_tag(f)
        fixed = _FIXED.get(get_schema_field_type(f)) if isinstance(classify_field(f), PrimitiveField) else None
        if tag is None and fixed is not None:  # consecutive fixed-width fields: one step over all of them
            width += fixed
            continue
        if width:
            steps.append(functools.partial(_skip, width))
            width = 0
        step = _field_step(cls, f, flexible, header, tag is not None)
        if tag is None:
            steps.append(step)
        else:
            tagged[tag] = step
    if width:
        steps.append(functools.partial(_skip, width))
    if flexible:
        steps.append(lambda data, offset: _tag_buffer(tagged, data, offset))
    return tuple(steps)


def _skip(width: int, data, offset: int) -> int:
    return offset + width


def _field_step(cls: type, f, flexible: bool, header: bool, is_tagged: bool):
    kind = classify_field(f)
    if isinstance(kind, PrimitiveField):
        width = _FIXED.get(get_schema_field_type(f))
        if width is not None:
            return lambda data, offset: offset + width
        reader = get_field_reader(cls, f, header, is_tagged)
        return lambda data, offset: offset + reader(data, offset)[1]
    if isinstance(kind, EntityField):
        nullable = is_optional(f)

        def entity(data, offset, inner=kind.type_):
            if nullable:
                marker, size = read_int8(data, offset)
                offset += size
                if marker < 0:
                    return offset
            return check_lengths(inner, data, offset)
        return entity
    if isinstance(kind, (EntityTupleField, PrimitiveTupleField)):
        if isinstance(kind, EntityTupleField):
            element = functools.partial(check_lengths, kind.type_)
        else:
            read = get_reader(get_schema_field_type(f), flexible, False)

            def element(data, offset):
                return offset + read(data, offset)[1]
        return lambda data, offset: _array(element, flexible, data, offset)
    raise LengthError(f"unexpected field kind {kind!r} of {cls.__name__}.{f.name}")


def _array(element, flexible: bool, data: bytes, offset: int) -> int:
    count, size = (read_compact_array_length if flexible else read_legacy_array_length)(data, offset)
    offset += size
    if count is None or count < 0:
        return offset
    if count > len(data) - offset:
        raise LengthError(f"array of {count} elements in {len(data) - offset} remaining bytes")
    for _ in range(count):
        offset = element(data, offset)
    return offset


def _tag_buffer(tagged: dict, data: bytes, offset: int) -> int:
    if offset < len(data) and data[offset] == 0:  # no tagged fields (nearly always): a one-byte count
        return offset + 1
    count, size = read_unsigned_varint(data, offset)
    offset += size
    if count > len(data) - offset:
        raise LengthError(f"{count} tagged fields in {len(data) - offset} remaining bytes")
    for _ in range(count):
        tag, size = read_unsigned_varint(data, offset)
        offset += size
        length, size = read_unsigned_varint(data, offset)
        offset += size
        if length > len(data) - offset:
            raise LengthError(f"tagged field of {length} bytes in {len(data) - offset} remaining bytes")
        if tag in tagged:  # a known tag's content is checked within its own bounds
            tagged[tag](data[offset:offset + length], 0)
        offset += length
    return offset
