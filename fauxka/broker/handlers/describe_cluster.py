"""DescribeCluster v0-v1 (KIP-700), from the metadata cache."""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .cluster_answers import AUTHORIZED_OPERATIONS_OMITTED, cluster_operations, listener_brokers

if TYPE_CHECKING:
    from ..protocol.requests import DescribeClusterRequest

_KEY = 60
_ENDPOINT_TYPE_BROKERS = 1


async def handle(ctx: RequestContext, request: "DescribeClusterRequest") -> Response:
    if ctx.version >= 1 and request.endpoint_type != _ENDPOINT_TYPE_BROKERS:
        return build(response_schema(_KEY, ctx.version), {
            "throttle_time": 0, "error_code": ErrorCode.mismatched_endpoint_type, "endpoint_type": request.endpoint_type,
            "error_message": f"The request was sent to an endpoint of type BROKER, but we wanted an endpoint "
                             f"of type {'CONTROLLER' if request.endpoint_type == 2 else request.endpoint_type}",
            "cluster_id": "", "controller_id": -1, "brokers": (),
            "cluster_authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
        })
    return build(response_schema(_KEY, ctx.version), {
        "throttle_time": 0,
        "error_code": 0,
        "error_message": None,
        "endpoint_type": _ENDPOINT_TYPE_BROKERS,
        "cluster_id": ctx.cache.cluster_id or "",
        "controller_id": ctx.advertised_controller_id(),
        "brokers": [
            {"broker_id": b["node_id"], "host": b["host"], "port": b["port"], "rack": b["rack"]}
            for b in listener_brokers(ctx)
        ],
        "cluster_authorized_operations": cluster_operations(ctx, request.include_cluster_authorized_operations),
    })
