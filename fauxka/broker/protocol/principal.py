"""KafkaPrincipal serde as Kafka's DefaultKafkaPrincipalBuilder writes it into envelopes:
an int16 version (0), then the flexible DefaultPrincipalData v0 body."""

import functools
import struct

from kio.schema.default_principal_data.v0 import DefaultPrincipalData

from .codec import RequestParseError, decode_entity, encode_entity

_VERSION = struct.Struct(">h")


class PrincipalDeserializationError(Exception):
    pass


@functools.lru_cache(maxsize=1024)  # asked for every forwarded request
def serialize_principal(principal: str, token_authenticated: bool = False) -> bytes:
    type_, _, name = principal.partition(":")
    body = encode_entity(DefaultPrincipalData(type_=type_, name=name, token_authenticated=token_authenticated))
    return _VERSION.pack(0) + body


@functools.lru_cache(maxsize=1024)
def deserialize_principal(data: bytes | None) -> str:
    """`Type:Name`; raises PrincipalDeserializationError for anything else than version 0 data."""
    if data is None or len(data) < _VERSION.size:
        raise PrincipalDeserializationError("no principal data")
    (version,) = _VERSION.unpack_from(data)
    if version != 0:
        raise PrincipalDeserializationError(f"unsupported principal data version {version}")
    try:
        principal = decode_entity(DefaultPrincipalData, data, _VERSION.size)
    except RequestParseError as exc:
        raise PrincipalDeserializationError(str(exc)) from None
    return f"{principal.type_}:{principal.name}"
