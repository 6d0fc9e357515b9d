"""RenewDelegationToken v1-v2 (KafkaApis.handleRenewTokenRequest): refused by the receiving broker
on token or PLAINTEXT connections; the controller renews (controller.tokens.renew)."""

from controller import tokens

from .token_common import change_expiry, refuse_unless_allowed

_KEY = 39


def precheck(ctx, body):
    return refuse_unless_allowed(ctx, _KEY)


async def handle(ctx, request):
    return await change_expiry(ctx, request, _KEY, tokens.renew, request.renew_period)
