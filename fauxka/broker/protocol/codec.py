"""Request and response encoding. Every message body goes through kio."""

import dataclasses
import functools
import io
import struct
from dataclasses import dataclass
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader
from kio.serial.errors import SerialError

from . import kio_speed  # noqa: F401  (before any encoding: kio's phantom checks made cheap)
from . import fetch_writer, old_versions
from .api_table import Api
from .derive import to_public, to_wire, wire_class
from .fast_writer import entity_writer
from .framing import FRAME_SIZE
from .length_guard import check_lengths
from .timestamps import int64_timestamps

_PEEK = struct.Struct(">hhi")
_NO_SIZE = bytes(FRAME_SIZE.size)
_INT64_TIMESTAMPS = (38, 39, 40)  # CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken


class RequestParseError(Exception):
    """The frame is not a request we can read; Kafka closes the connection."""


@dataclass(frozen=True, slots=True)
class Request:
    api: Api
    version: int
    header: Any
    body: Any
    frame: bytes  # header + body as received, kept for forwarding

    @property
    def correlation_id(self) -> int:
        return self.header.correlation_id

    @property
    def client_id(self) -> str | None:
        return self.header.client_id


def peek(frame: bytes) -> tuple[int, int, int]:
    """api key, api version and correlation id: the fixed start of every header."""
    if len(frame) < _PEEK.size:
        raise RequestParseError(f"request header truncated at {len(frame)} bytes")
    return _PEEK.unpack_from(frame)


@functools.cache
def request_schema(key: int, version: int) -> type:
    """kio's class for the request, or the one old_versions derives or declares for a version kio lacks."""
    return old_versions.request_class(key, version) or load_request_schema(key, version)


@functools.cache
def response_schema(key: int, version: int) -> type:
    cls = old_versions.response_class(key, version) or load_response_schema(key, version)
    if key in _INT64_TIMESTAMPS:  # delegation tokens: -1 timestamps, which kio cannot read as datetimes
        return int64_timestamps(cls)
    return cls


@functools.cache
def _reader(cls: type):
    wire = wire_class(cls)
    read = entity_reader(wire)
    if wire is cls:
        return read

    def read_public(data: bytes, offset: int):
        entity, used = read(data, offset)
        return to_public(cls, entity), used
    return read_public


@functools.cache
def _writer(cls: type):
    wire = wire_class(cls)
    write = entity_writer(wire)
    if wire is cls:
        return write
    return lambda buf, entity: write(buf, to_wire(entity))


def decode_request(frame: bytes, api: Api, version: int) -> Request:
    cls = request_schema(api.key, version)
    try:
        check_lengths(wire_class(cls), frame, check_lengths(cls.__header_schema__, frame, 0))
        header, used = _reader(cls.__header_schema__)(frame, 0)
        body, _ = _reader(cls)(frame, used)
    except (SerialError, ValueError, TypeError) as exc:
        raise RequestParseError(f"{api.name} v{version}: {exc}") from None
    return Request(api, version, header, body, frame)


# Answers that are small, immutable and the same request after request (OffsetCommit's "none" for
# a consumer's partitions, Heartbeat's): their body is encoded once and kept (kio's writers are
# Python, and an OffsetCommit's body costs more to encode than its entity costs to hash).
_REPEATED_ANSWERS = frozenset((8, 12))


def encode_response(correlation_id: int, response: Any) -> bytes:
    """The framed response: size prefix, the header version the api wants, the body."""
    cls = type(response)
    header_cls = cls.__header_schema__
    buf = _framed()
    _writer(header_cls)(buf, header_cls(correlation_id=correlation_id))
    if getattr(cls, "__api_key__", None) in _REPEATED_ANSWERS:
        buf.write(_encoded_body(response))
    elif cls is not fetch_writer.RESPONSE_CLASS or not fetch_writer.write(buf, response):
        _writer(cls)(buf, response)
    return _frame(buf)


@functools.lru_cache(maxsize=1024)
def _encoded_body(response: Any) -> bytes:
    buf = io.BytesIO()
    _writer(type(response))(buf, response)
    return buf.getvalue()


def encode_request(request: Any, correlation_id: int, client_id: str | None) -> bytes:
    """The framed request, as a client sends it (ControlledShutdown v0's header v0 has no client id)."""
    cls = type(request)
    header_cls = cls.__header_schema__
    named = {"client_id": client_id} if _has_client_id(header_cls) else {}
    header = header_cls(
        request_api_key=cls.__api_key__,
        request_api_version=cls.__version__,
        correlation_id=correlation_id,
        **named,
    )
    buf = _framed()
    _writer(header_cls)(buf, header)
    _writer(cls)(buf, request)
    return _frame(buf)


def _framed() -> io.BytesIO:
    """A buffer whose first 4 bytes are the size prefix, filled in by _frame."""
    buf = io.BytesIO()
    buf.write(_NO_SIZE)
    return buf


def _frame(buf: io.BytesIO) -> bytes:
    """The frame without a copy of it (a Fetch response carries up to replica.fetch.response.max.bytes
    of records; prefixing them afterwards copied them once more)."""
    with buf.getbuffer() as view:
        FRAME_SIZE.pack_into(view, 0, len(view) - FRAME_SIZE.size)
    return buf.getvalue()


@functools.cache
def _has_client_id(header_cls: type) -> bool:
    return any(f.name == "client_id" for f in dataclasses.fields(header_cls))


def decode_response(frame: bytes, request_cls: type) -> tuple[int, Any]:
    """(correlation id, response) for a response to a request of `request_cls`."""
    cls = response_schema(request_cls.__api_key__, request_cls.__version__)
    try:
        header, used = _reader(cls.__header_schema__)(frame, 0)
        body, _ = _reader(cls)(frame, used)
    except (SerialError, ValueError, TypeError) as exc:
        raise RequestParseError(f"response to {cls.__name__}: {exc}") from None
    return header.correlation_id, body


def encode_entity(entity: Any) -> bytes:
    """A bare kio entity (no header, no size prefix), e.g. DefaultPrincipalData."""
    buf = io.BytesIO()
    _writer(type(entity))(buf, entity)
    return buf.getvalue()


def decode_entity(cls: type, data: bytes, offset: int = 0) -> Any:
    try:
        entity, _ = _reader(cls)(data, offset)
    except (SerialError, ValueError, TypeError) as exc:
        raise RequestParseError(f"{cls.__name__}: {exc}") from None
    return entity


def strip_size_prefix(framed: bytes) -> bytes:
    return framed[4:]
