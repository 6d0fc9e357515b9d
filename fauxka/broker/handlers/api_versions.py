"""ApiVersions: derived from the api table (Produce advertised from v0, served from v3); v3+ the
supported and finalized features (KIP-584) of a ZK-mode Kafka 3.9 broker (fauxka/model/features.py),
and the client's software name and version (KIP-511): a valid pair names the connection's client in
socket-server-metrics (Kafka's SocketServer does it as the request arrives), an invalid one is
INVALID_REQUEST with no api keys (ApiVersionsRequest.isValid / getErrorResponse)."""

import re
from typing import TYPE_CHECKING

from fauxka.model import features
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol import api_table
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import ApiVersionsRequest

_KEY = 18
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")  # Kafka's SOFTWARE_NAME_VERSION_PATTERN


def _ranges(only: int | None = None) -> list[dict]:
    return [
        {"api_key": api.key, "min_version": api.advertised_range[0], "max_version": api.max_version}
        for api in sorted(api_table.TABLE.values(), key=lambda a: a.key)
        if only is None or api.key == only
    ]


async def handle(ctx: RequestContext, request: "ApiVersionsRequest") -> Response:
    if ctx.version >= 3:
        software = (request.client_software_name, request.client_software_version)
        if not all(_SOFTWARE.fullmatch(part) for part in software):
            return build(response_schema(_KEY, ctx.version), {"error_code": ErrorCode.invalid_request,
                                                               "api_keys": (), "throttle_time": 0})
        connection = ctx.connection
        if connection is not None and ctx.forwarded_by is None and software != connection.client_software:
            ctx.metrics.sockets.software_named(connection.listener, connection.client_software, software)
            connection.client_software = software
    values = {"error_code": 0, "api_keys": _ranges(), "throttle_time": 0}
    if ctx.version >= 3:  # KIP-584's tagged fields, as a ZK-mode 3.9 broker fills them
        cache = ctx.cache
        values.update(supported_features=features.supported_for_api_versions(ctx.version),
                      finalized_features=features.finalized_for_api_versions(cache.finalized_features),
                      finalized_features_epoch=cache.features_epoch)
    return build(response_schema(_KEY, ctx.version), values)


def unsupported_version_response():
    """Kafka's answer to an ApiVersions version it does not know: v0, with its own range only."""
    return build(response_schema(_KEY, 0), {"error_code": ErrorCode.unsupported_version, "api_keys": _ranges(only=_KEY)})
