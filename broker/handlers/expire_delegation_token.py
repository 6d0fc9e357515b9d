"""ExpireDelegationToken v1-v2 (KafkaApis.handleExpireTokenRequest): refused by the receiving broker
on token or PLAINTEXT connections; the controller expires (controller.tokens.expire): a negative
period removes the token at once."""

from controller import tokens

from .admin_common import NOT_CONTROLLER, admin, caller
from .renew_delegation_token import response
from .token_common import allow_token_requests, millis

_KEY = 40


def precheck(ctx, body):
    return None if allow_token_requests(ctx) else response(_KEY, ctx.version, tokens.REQUEST_NOT_ALLOWED)


async def handle(ctx, request):
    controller = admin(ctx)
    if controller is None:
        return response(_KEY, ctx.version, NOT_CONTROLLER)
    code, expiry = await tokens.expire(controller, ctx.broker.tokens, tokens.settings(ctx.config), ctx.principal,
                                       bytes(request.hmac), millis(request.expiry_time_period), caller(ctx))
    return response(_KEY, ctx.version, code, expiry)
