"""RenewDelegationToken v1-v2 (KafkaApis.handleRenewTokenRequest): refused by the receiving broker
on token or PLAINTEXT connections; the controller renews (controller.tokens.renew)."""

from typing import TYPE_CHECKING


from ..context import RequestContext
from ..protocol.requests import Response
from .token_common import change_expiry, refuse_unless_allowed

if TYPE_CHECKING:
    from ..protocol.requests import RenewDelegationTokenRequest

_KEY = 39


def precheck(ctx: RequestContext, body):
    return refuse_unless_allowed(ctx, _KEY)


async def handle(ctx: RequestContext, request: "RenewDelegationTokenRequest") -> Response:
    return await change_expiry(ctx, request, _KEY, False, request.renew_period)
