"""CreateDelegationToken v1-v3 (KafkaApis.handleCreateTokenRequest): the receiving broker refuses
token or PLAINTEXT connections (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), a token for another owner
without CreateTokens on that User (DELEGATION_TOKEN_AUTHORIZATION_FAILED, KIP-373) and renewers that
are not users (INVALID_PRINCIPAL_TYPE); the controller writes it (controller.tokens)."""

from typing import TYPE_CHECKING

from fauxka.model import delegation_tokens
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .admin_common import admin, caller
from .token_common import allow_token_requests, millis, split

if TYPE_CHECKING:
    from ..protocol.requests import CreateDelegationTokenRequest

_KEY = 38


def owner_of(ctx: RequestContext, body) -> str:
    name = getattr(body, "owner_principal_name", None)  # v3+
    return ctx.principal if not name else f"{body.owner_principal_type}:{name}"


def precheck(ctx: RequestContext, body):
    owner, requester = owner_of(ctx, body), ctx.principal
    if not allow_token_requests(ctx):
        return response(ctx.version, ErrorCode.delegation_token_request_not_allowed, owner, requester)
    if owner != requester and not ctx.authorized("CREATE_TOKENS", "USER", owner):
        return response(ctx.version, ErrorCode.delegation_token_authorization_failed, owner, requester)
    if any(r.principal_type != "User" for r in body.renewers):
        return response(ctx.version, ErrorCode.invalid_principal_type, owner, requester)
    return None


async def handle(ctx: RequestContext, request: "CreateDelegationTokenRequest") -> Response:
    owner, requester = owner_of(ctx, request), ctx.principal
    controller = admin(ctx)
    if controller is None:
        return response(ctx.version, ErrorCode.not_controller, owner, requester)
    renewers = [f"{r.principal_type}:{r.principal_name}" for r in request.renewers]
    settings = delegation_tokens.settings(ctx.config)
    code, info, hmac = await controller.tokens.create(settings, owner, requester, renewers,
                                                      millis(request.max_lifetime), caller(ctx))
    if info is None:
        return response(ctx.version, code, owner, requester)
    return response(ctx.version, code, owner, requester, info.issue_ms, info.expiry_ms, info.max_ms, info.token_id,
                    hmac)


def response(version: int, code: int, owner: str, requester: str, issued: int = -1, expiry: int = -1,
             max_ms: int = -1, token_id: str = "", hmac: bytes = b""):
    """CreateDelegationTokenResponse.prepareResponse."""
    (owner_type, owner_name), (requester_type, requester_name) = split(owner), split(requester)
    return build(response_schema(_KEY, version), {
        "error_code": code, "principal_type": owner_type, "principal_name": owner_name,
        "token_requester_principal_type": requester_type, "token_requester_principal_name": requester_name,
        "issue_timestamp": issued, "expiry_timestamp": expiry,
        "max_timestamp": max_ms, "token_id": token_id, "hmac": hmac, "throttle_time": 0})
