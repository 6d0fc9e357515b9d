"""ExpireDelegationToken v1-v2 (KafkaApis.handleExpireTokenRequest): refused by the receiving broker
on token or PLAINTEXT connections; the controller expires (controller.tokens.expire): a negative
period removes the token at once."""

from typing import TYPE_CHECKING


from ..context import RequestContext
from ..protocol.requests import Response
from .token_common import change_expiry, refuse_unless_allowed

if TYPE_CHECKING:
    from ..protocol.requests import ExpireDelegationTokenRequest

_KEY = 40


def precheck(ctx: RequestContext, body):
    return refuse_unless_allowed(ctx, _KEY)


async def handle(ctx: RequestContext, request: "ExpireDelegationTokenRequest") -> Response:
    return await change_expiry(ctx, request, _KEY, True, request.expiry_time_period)
