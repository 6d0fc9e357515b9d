"""ExpireDelegationToken v1-v2 (KafkaApis.handleExpireTokenRequest): refused by the receiving broker
on token or PLAINTEXT connections; the controller expires (controller.tokens.expire): a negative
period removes the token at once."""

from controller import tokens

from .token_common import change_expiry, refuse_unless_allowed

_KEY = 40


def precheck(ctx, body):
    return refuse_unless_allowed(ctx, _KEY)


async def handle(ctx, request):
    return await change_expiry(ctx, request, _KEY, tokens.expire, request.expiry_time_period)
