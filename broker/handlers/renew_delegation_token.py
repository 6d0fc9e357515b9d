"""RenewDelegationToken v1-v2 (KafkaApis.handleRenewTokenRequest): refused by the receiving broker
on token or PLAINTEXT connections; the controller renews (controller.tokens.renew)."""

from controller import tokens

from ..protocol.build import build
from ..protocol.codec import response_schema
from .admin_common import NOT_CONTROLLER, admin, caller
from .token_common import allow_token_requests, millis

_KEY = 39


def precheck(ctx, body):
    return None if allow_token_requests(ctx) else response(_KEY, ctx.version, tokens.REQUEST_NOT_ALLOWED)


async def handle(ctx, request):
    controller = admin(ctx)
    if controller is None:
        return response(_KEY, ctx.version, NOT_CONTROLLER)
    code, expiry = await tokens.renew(controller, ctx.broker.tokens, tokens.settings(ctx.config), ctx.principal,
                                      bytes(request.hmac), millis(request.renew_period), caller(ctx))
    return response(_KEY, ctx.version, code, expiry)


def response(key: int, version: int, code: int, expiry: int = tokens.ERROR_TIMESTAMP):
    return build(response_schema(key, version), {"error_code": code, "expiry_timestamp": expiry,
                                                 "throttle_time": 0})
