"""Config entity names as Kafka stores them (/config/users|clients|ips/<name>): Sanitizer's
URL-encoding, and ConfigEntityName.Default, the name of a null (default) entity. Pure functions:
the brokers' handlers use them on the wire's names, fauxka/zkstore/config_entities.py on znodes."""

import re

from .errors import ErrorCode, KafkaError

DEFAULT = "<default>"  # ConfigEntityName.Default: the znode of a null (default) entity name
_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")


def sanitize(name: str) -> str:
    """Kafka's Sanitizer.sanitize: URL-encoding with '*' as %2A and space as %20."""
    return "".join(chr(b) if b in _SAFE else f"%{b:02X}" for b in name.encode("utf-8", "surrogatepass"))


def desanitize(name: str) -> str:
    """URLDecoder.decode; a malformed escape fails the request, as Java's IllegalArgumentException."""
    if re.search(r"%(?![0-9A-Fa-f]{2})", name):
        raise KafkaError(ErrorCode.unknown_server_error, None)
    raw = re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), name.replace("+", " ").encode())
    return raw.decode("utf-8", "replace")


def sanitize_entity(name: str | None) -> str:
    return DEFAULT if name is None else sanitize(name)


def desanitize_entity(name: str) -> str | None:
    return None if name == DEFAULT else desanitize(name)
