"""EnvelopeRequest v0 on the controller (KIP-590): checks in Kafka's order, then the
inner request runs as the forwarded client, and its response goes back inside."""

import functools
import ipaddress
from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..controller_link import CLIENT_ID_PREFIX
from ..protocol import api_table
from ..protocol.build import build, error_codes
from ..protocol.codec import RequestParseError, decode_request, encode_response, peek, response_schema, strip_size_prefix
from ..protocol.principal import PrincipalDeserializationError, deserialize_principal
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import EnvelopeRequest


class _Refused(Exception):
    def __init__(self, code: int):
        self.code = code


def precheck(ctx: RequestContext, request):
    """Kafka's order: the listener, then CLUSTER_ACTION, before dispatch's NOT_CONTROLLER (the role)."""
    if ctx.listener != ctx.config.inter_broker_listener:
        raise RequestParseError(f"EnvelopeRequest on listener {ctx.listener}, not the inter-broker listener")
    if not ctx.authorized("CLUSTER_ACTION", "CLUSTER", "kafka-cluster"):
        code = ErrorCode.cluster_authorization_failed
        ctx.metrics.envelopes.labels(str(_forwarding_broker(ctx.request.client_id)), "?", str(code)).inc()
        return _response(None, code)
    return None


def error_response(request, code: int):
    """An envelope refused as a whole (dispatch's NOT_CONTROLLER): the forwarder retries elsewhere."""
    return _response(None, code)


async def handle(ctx: RequestContext, request: "EnvelopeRequest", *, dispatch) -> Response:
    """`dispatch(inner_ctx)` answers the inner request (bound by fauxka/broker/handlers/table.py)."""
    forwarder = _forwarding_broker(ctx.request.client_id)
    metrics = ctx.metrics.envelopes
    try:
        inner_ctx = _inner_context(ctx, request, forwarder)
    except _Refused as refused:
        metrics.labels(str(forwarder), "?", str(refused.code)).inc()
        return _response(None, refused.code)
    try:
        response = await dispatch(inner_ctx)
    except RequestParseError:  # the inner request is one Kafka refuses to answer: the forwarder closes its client
        metrics.labels(str(forwarder), inner_ctx.request.api.name, str(ErrorCode.unsupported_version)).inc()
        return _response(None, ErrorCode.unsupported_version)
    if not isinstance(response, bytes) and ErrorCode.not_controller in error_codes(response):
        metrics.labels(str(forwarder), inner_ctx.request.api.name, str(ErrorCode.not_controller)).inc()
        return _response(None, ErrorCode.not_controller)  # the forwarder retries with the new controller
    data = response if isinstance(response, bytes) else strip_size_prefix(
        encode_response(inner_ctx.request.correlation_id, response))
    ctx.metrics.child(metrics, str(forwarder), inner_ctx.request.api.name, "0").inc()
    return _response(data, 0)


def _inner_context(ctx: RequestContext, request, forwarder: int) -> RequestContext:
    if not ctx.controller.active:  # the controller moved while dispatch passed it on
        raise _Refused(ErrorCode.not_controller)
    try:
        principal = deserialize_principal(request.request_principal)
    except PrincipalDeserializationError:
        raise _Refused(ErrorCode.principal_deserialization_failure) from None
    frame = request.request_data
    try:
        api_key, version, _ = peek(frame)
        api = api_table.lookup(api_key)
        if api is None or not api.supports(version):
            raise RequestParseError(f"api {api_key} v{version}")
        inner = decode_request(frame, api, version)
    except RequestParseError:
        raise _Refused(ErrorCode.unsupported_version) from None
    if not api.forwardable:
        raise _Refused(ErrorCode.invalid_request)
    address = request.client_host_address
    if len(address) not in (4, 16):
        raise _Refused(ErrorCode.invalid_request)
    log = ctx.log.bind(api=api.name, version=version, forwarded_by=forwarder, principal=principal)
    return RequestContext.of(ctx, inner, ctx.listener, principal, _host(address), log,
                             forwarded_by=forwarder, connection=ctx.connection)


@functools.lru_cache(maxsize=1024)
def _host(address: bytes) -> str:
    return str(ipaddress.ip_address(address))


def _forwarding_broker(client_id: str | None) -> int:
    """fauxka forwarders name themselves in the envelope's client id; -1 for any other sender."""
    if client_id and client_id.startswith(CLIENT_ID_PREFIX):
        suffix = client_id[len(CLIENT_ID_PREFIX):]
        if suffix.isdigit():
            return int(suffix)
    return -1


def _response(data: bytes | None, code: int):
    return build(response_schema(58, 0), {"response_data": data, "error_code": code})
