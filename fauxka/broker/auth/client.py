"""The client side of SASL for the broker's own connections (inter-broker forwarding, tests):
SaslHandshake v1, then SaslAuthenticate v2 tokens, PLAIN or SCRAM-SHA-256/512."""

from typing import Any


from fauxka.model.errors import ErrorCode
from fauxka.model.scram_credential import MECHANISMS

from ..protocol.codec import request_schema
from .scram import ScramClient, ScramError

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


class SaslClientError(Exception):
    """Authentication did not succeed; `error_code` is the broker's (0 when the client refused the
    server's messages). Kafka closes the connection after a failure: open a new one."""

    def __init__(self, message: str, error_code: int = 0):
        super().__init__(message)
        self.error_code = error_code


async def authenticate(conn: Any, mechanism: str, username: str, password: str, timeout: float,
                       extensions: dict[str, str] | None = None) -> None:
    """Authenticate `conn` (broker.protocol.client.KafkaConnection, or anything with
    `async send(request, timeout) -> response`) as `username`. Each round trip has `timeout`
    seconds. `extensions`: SCRAM extensions, e.g. {"tokenauth": "true"} to log in with a delegation
    token (username: its id, password: its base64 HMAC). Raises SaslClientError on failure;
    transport errors propagate as they are."""
    if mechanism != "PLAIN" and mechanism not in MECHANISMS:
        raise SaslClientError(f"SASL mechanism {mechanism} is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)")
    handshake = await conn.send(request_schema(SASL_HANDSHAKE, 1)(mechanism=mechanism), timeout)
    code = int(handshake.error_code)
    if code:
        raise SaslClientError(f"SaslHandshake failed with {_name(code)}; the broker enables "
                              f"{', '.join(handshake.mechanisms) or 'no mechanism'}", code)
    if mechanism == "PLAIN":
        await _token(conn, f"\0{username}\0{password}".encode(), timeout)
        return
    client = ScramClient(mechanism, username, password, extensions)
    try:
        server_first = await _token(conn, client.first(), timeout)
        server_final = await _token(conn, client.final(server_first), timeout)
        client.verify(server_final)
    except ScramError as exc:
        raise SaslClientError(f"SCRAM exchange failed: {exc}") from None


async def _token(conn: Any, token: bytes, timeout: float) -> bytes:
    response = await conn.send(request_schema(SASL_AUTHENTICATE, 2)(auth_bytes=token), timeout)
    code = int(response.error_code)
    if code:
        raise SaslClientError(f"SaslAuthenticate failed with {_name(code)}: {response.error_message}", code)
    return bytes(response.auth_bytes)


def _name(code: int) -> str:
    try:
        return f"{ErrorCode(code).name.upper()} ({code})"
    except ValueError:
        return str(code)
