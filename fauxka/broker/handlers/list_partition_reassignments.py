"""ListPartitionReassignments v0 (KIP-455): the reassignments in progress, of the named
partitions or (topics null) of every partition; a named partition not being reassigned, or
unknown, is left out.

Only v0 exists (flexible). Forwardable: a broker that is not the controller forwards it.
Kafka (KafkaApis.handleListPartitionReassignmentsRequest, KafkaController
.processListPartitionReassignments): DESCRIBE on the Cluster, else CLUSTER_AUTHORIZATION_FAILED
at the top level with every named partition listed empty (getErrorResponse); replicas are the
full set (target first, then the origin replicas), with the adding and removing ones.
"""

from collections import defaultdict
from typing import TYPE_CHECKING

from fauxka.model.errors import ControllerMoved, ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .admin_common import active_controller, not_authorized_message
from .error_responses import MESSAGES, NOT_CONTROLLER

if TYPE_CHECKING:
    from ..protocol.requests import ListPartitionReassignmentsRequest

_KEY = 46


async def handle(ctx: RequestContext, request: "ListPartitionReassignmentsRequest") -> Response:
    if not ctx.authorized("DESCRIBE", "CLUSTER", "kafka-cluster"):
        return error_response(ctx.request, ErrorCode.cluster_authorization_failed, not_authorized_message(ctx))
    if active_controller(ctx) is None:
        return _response(ctx.version, ErrorCode.not_controller, NOT_CONTROLLER, [])
    keys = None if request.topics is None else [
        (t.name, int(p)) for t in request.topics for p in t.partition_indexes]
    try:
        found = await ctx.controller.reassignments.listing(keys)
    except ControllerMoved:
        return _response(ctx.version, ErrorCode.not_controller, NOT_CONTROLLER, [])
    by_topic = defaultdict(list)
    for (topic, partition), a in found.items():
        by_topic[topic].append({"partition_index": partition, "replicas": a.replicas,
                                "adding_replicas": a.adding, "removing_replicas": a.removing})
    return _response(ctx.version, ErrorCode.none, None, [{"name": t, "partitions": ps} for t, ps in by_topic.items()])


def _response(version: int, code: int, message: str | None, topics: list):
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": code,
                                                  "error_message": message, "topics": topics})


def error_response(request, code: int, message: str | None = None):
    message = MESSAGES.get(code) if message is None else message
    """ListPartitionReassignmentsRequest.getErrorResponse: the named partitions, empty."""
    return _response(request.version, code, message, [
        {"name": t.name, "partitions": [{"partition_index": p} for p in t.partition_indexes]}
        for t in request.body.topics or ()])
