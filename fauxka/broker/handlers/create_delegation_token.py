"""CreateDelegationToken v1-v3 (KafkaApis.handleCreateTokenRequest): the receiving broker refuses
token or PLAINTEXT connections (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), a token for another owner
without CreateTokens on that User (DELEGATION_TOKEN_AUTHORIZATION_FAILED, KIP-373) and renewers that
are not users (INVALID_PRINCIPAL_TYPE); the controller writes it (controller.tokens)."""

from typing import TYPE_CHECKING

from fauxka.model import delegation_tokens
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.requests import Response
from .admin_common import active_controller, caller
from .token_common import allow_token_requests, create_response, millis

if TYPE_CHECKING:
    from ..protocol.requests import CreateDelegationTokenRequest

_KEY = 38


def owner_of(ctx: RequestContext, body) -> str:
    name = getattr(body, "owner_principal_name", None)  # v3+
    return ctx.principal if not name else f"{body.owner_principal_type}:{name}"


def precheck(ctx: RequestContext, body):
    owner, requester = owner_of(ctx, body), ctx.principal
    if not allow_token_requests(ctx):
        return create_response(ctx.version, ErrorCode.delegation_token_request_not_allowed, owner, requester)
    if owner != requester and not ctx.authorized("CREATE_TOKENS", "USER", owner):
        return create_response(ctx.version, ErrorCode.delegation_token_authorization_failed, owner, requester)
    if any(r.principal_type != "User" for r in body.renewers):
        return create_response(ctx.version, ErrorCode.invalid_principal_type, owner, requester)
    return None


async def handle(ctx: RequestContext, request: "CreateDelegationTokenRequest") -> Response:
    owner, requester = owner_of(ctx, request), ctx.principal
    controller = active_controller(ctx)
    if controller is None:
        return create_response(ctx.version, ErrorCode.not_controller, owner, requester)
    renewers = [f"{r.principal_type}:{r.principal_name}" for r in request.renewers]
    settings = delegation_tokens.settings(ctx.config)
    code, info, hmac = await controller.tokens.create(settings, owner, requester, renewers,
                                                      millis(request.max_lifetime), caller(ctx))
    if info is None:
        return create_response(ctx.version, code, owner, requester)
    return create_response(ctx.version, code, owner, requester, info.issue_ms, info.expiry_ms, info.max_ms, info.token_id,
                    hmac)
