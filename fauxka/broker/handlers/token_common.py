"""What the delegation token handlers share: KafkaApis.allowTokenRequests, durations, principals.
Their responses' timestamps are int64 milliseconds (broker.protocol.timestamps)."""

import datetime

from fauxka.model import delegation_tokens
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from .admin_common import active_controller, caller


def allow_token_requests(ctx: RequestContext) -> bool:
    """Not over a token-authenticated connection, nor a PLAINTEXT one (fauxka has no SSL listeners).
    Checked by the receiving broker: a forwarded request was checked by its forwarder."""
    conn = ctx.connection
    if conn is None or conn.token_authenticated:
        return False
    return conn.endpoint.security_protocol not in ("PLAINTEXT", "SSL")


def millis(value: datetime.timedelta) -> int:
    return round(value / datetime.timedelta(milliseconds=1))


def split(principal: str) -> tuple[str, str]:
    """KafkaPrincipal's (type, name) of `Type:Name`."""
    type_, _, name = principal.partition(":")
    return type_, name


def expiry_response(key: int, version: int, code: int, expiry: int = delegation_tokens.ERROR_TIMESTAMP):
    """Renew's and Expire's response: an error code and the new expiry timestamp."""
    return build(response_schema(key, version), {"error_code": code, "expiry_timestamp": expiry,
                                                 "throttle_time": 0})


async def change_expiry(ctx: RequestContext, request, key: int, expire: bool, period) -> object:
    """Renew or (expire) Expire, through the controller's TokenWrites, with the request's period."""
    controller = active_controller(ctx)
    if controller is None:
        return expiry_response(key, ctx.version, ErrorCode.not_controller)
    settings = delegation_tokens.settings(ctx.config)
    change = controller.tokens.expire if expire else controller.tokens.renew
    code, expiry = await change(settings, ctx.principal, bytes(request.hmac), millis(period), caller(ctx))
    return expiry_response(key, ctx.version, code, expiry)


def refuse_unless_allowed(ctx: RequestContext, key: int):
    """The receiving broker's check before forwarding (precheck): no tokens over PLAINTEXT or tokens."""
    return None if allow_token_requests(ctx) else expiry_response(key, ctx.version, ErrorCode.delegation_token_request_not_allowed)


CREATE_KEY = 38  # CreateDelegationToken


def create_response(version: int, code: int, owner: str, requester: str, issued: int = -1, expiry: int = -1,
                    max_ms: int = -1, token_id: str = "", hmac: bytes = b""):
    """CreateDelegationTokenResponse.prepareResponse."""
    (owner_type, owner_name), (requester_type, requester_name) = split(owner), split(requester)
    return build(response_schema(CREATE_KEY, version), {
        "error_code": code, "principal_type": owner_type, "principal_name": owner_name,
        "token_requester_principal_type": requester_type, "token_requester_principal_name": requester_name,
        "issue_timestamp": issued, "expiry_timestamp": expiry,
        "max_timestamp": max_ms, "token_id": token_id, "hmac": hmac, "throttle_time": 0})
