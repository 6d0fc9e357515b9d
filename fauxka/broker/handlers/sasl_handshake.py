"""SaslHandshake v0-v1. On a SASL listener before authentication it chooses the mechanism
(broker.auth.sasl); on a PLAINTEXT listener or after authentication KafkaApis answers
ErrorCode.illegal_sasl_state."""


from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import SaslHandshakeRequest

_KEY = 17


async def handle(ctx: RequestContext, request: "SaslHandshakeRequest") -> Response:
    sasl = ctx.connection.sasl if ctx.connection is not None and ctx.forwarded_by is None else None
    if sasl is None or sasl.complete:
        code, mechanisms = ErrorCode.illegal_sasl_state, []
    else:
        code, mechanisms = await sasl.handshake(request.mechanism, ctx.version)
    return build(response_schema(_KEY, ctx.version), {"error_code": code, "mechanisms": mechanisms})
