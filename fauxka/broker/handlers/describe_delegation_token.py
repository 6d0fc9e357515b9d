"""DescribeDelegationToken v1-v3, answered by any broker from its token cache
(KafkaApis.handleDescribeTokensRequest): owners and renewers see their tokens; others need Describe
on the DelegationToken (its id) or DescribeTokens on the owner's User (KIP-373)."""

from typing import TYPE_CHECKING

from fauxka.model import delegation_tokens
from fauxka.model.errors import ErrorCode
from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .token_common import allow_token_requests, split

if TYPE_CHECKING:
    from ..protocol.requests import DescribeDelegationTokenRequest

_KEY = 41


async def handle(ctx: RequestContext, request: "DescribeDelegationTokenRequest") -> Response:
    if not allow_token_requests(ctx):
        return _response(ctx.version, ErrorCode.delegation_token_request_not_allowed, [])
    cache = ctx.tokens
    if not cache.enabled:
        return _response(ctx.version, ErrorCode.delegation_token_auth_disabled, [])
    if request.owners is not None and not request.owners:
        return _response(ctx.version, 0, [])
    owners = None if request.owners is None else [f"{o.principal_type}:{o.principal_name}" for o in request.owners]
    found = [t for t in cache.tokens() if delegation_tokens.visible(
        t, ctx.principal, owners,
        lambda token_id: ctx.authorized("DESCRIBE", "DELEGATION_TOKEN", token_id),
        lambda owner: ctx.authorized("DESCRIBE_TOKENS", "USER", owner))]
    return _response(ctx.version, 0, [_described(t, cache.hmac(t.token_id)) for t in found])


def _described(token: delegation_tokens.TokenInfo, hmac: bytes) -> dict:
    (owner_type, owner_name), (requester_type, requester_name) = split(token.owner), split(token.requester)
    return {"principal_type": owner_type, "principal_name": owner_name,
            "token_requester_principal_type": requester_type, "token_requester_principal_name": requester_name,
            "issue_timestamp": token.issue_ms, "expiry_timestamp": token.expiry_ms, "max_timestamp": token.max_ms,
            "token_id": token.token_id, "hmac": hmac,
            "renewers": [dict(zip(("principal_type", "principal_name"), split(r))) for r in token.renewers]}


def _response(version: int, code: int, found: list[dict]):
    return build(response_schema(_KEY, version), {"error_code": code, "tokens": found, "throttle_time": 0})
