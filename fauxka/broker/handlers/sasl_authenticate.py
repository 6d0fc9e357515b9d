"""SaslAuthenticate v0-v2: one SASL token of the exchange chosen by SaslHandshake v1+
(broker.auth.sasl). On a PLAINTEXT listener or after authentication KafkaApis answers
ErrorCode.illegal_sasl_state. v1+ carries the session lifetime (KIP-368, connections.max.reauth.ms)."""


from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import SaslAuthenticateRequest

_KEY = 36
AFTER_AUTHENTICATION = "SaslAuthenticate request received after successful authentication"


async def handle(ctx: RequestContext, request: "SaslAuthenticateRequest") -> Response:
    sasl = ctx.connection.sasl if ctx.connection is not None and ctx.forwarded_by is None else None
    if sasl is None or sasl.complete:
        code, message, token = ErrorCode.illegal_sasl_state, AFTER_AUTHENTICATION, b""
    else:
        code, message, token = await sasl.authenticate(request.auth_bytes)
    lifetime = sasl.session_lifetime_ms if sasl is not None and sasl.complete and not code else 0
    return build(response_schema(_KEY, ctx.version), {"error_code": code, "error_message": message,
                                                      "auth_bytes": token, "session_lifetime": lifetime})
