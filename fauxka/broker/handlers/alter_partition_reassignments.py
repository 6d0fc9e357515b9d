"""AlterPartitionReassignments v0 (KIP-455): start, replace or cancel (null replicas) partition
reassignments; the controller carries them out (fauxka/controller/reassignment.py).

Only v0 exists (flexible). Forwardable: a broker that is not the controller forwards it.
Kafka (KafkaApis.handleAlterPartitionReassignmentsRequest, KafkaController
.processApiPartitionReassignment): ALTER on the Cluster, else the whole request fails with
CLUSTER_AUTHORIZATION_FAILED (top level and every partition, AbstractRequest.getErrorResponse).
The request becomes a Map: a partition named twice counts once, with its last replica list.
Per partition: INVALID_REPLICA_ASSIGNMENT (empty, duplicate, negative or not live brokers, with
Kafka's messages), NO_REASSIGNMENT_IN_PROGRESS (cancelling nothing), UNKNOWN_TOPIC_OR_PARTITION
"The partition does not exist." (checked after the replicas, as Kafka does). Answered once the
new assignment is written, not when the reassignment completes.
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
    from ..protocol.requests import AlterPartitionReassignmentsRequest

_KEY = 45


async def handle(ctx: RequestContext, request: "AlterPartitionReassignmentsRequest") -> Response:
    if not ctx.authorized("ALTER", "CLUSTER", "kafka-cluster"):
        return error_response(ctx.request, ErrorCode.cluster_authorization_failed, not_authorized_message(ctx))
    if active_controller(ctx) is None:
        return _response(ctx.version, ErrorCode.not_controller, NOT_CONTROLLER, [])
    wanted = {}
    for topic in request.topics:
        for p in topic.partitions:
            key = (topic.name, p.partition_index)
            wanted.pop(key, None)  # a Scala Map built from the list: the last entry wins
            wanted[key] = None if p.replicas is None else [int(r) for r in p.replicas]
    try:
        results = await ctx.controller.reassignments.alter(wanted)
    except ControllerMoved:
        return _response(ctx.version, ErrorCode.not_controller, NOT_CONTROLLER, [])
    by_topic = defaultdict(list)
    for (topic, partition), (code, message) in results.items():
        by_topic[topic].append({"partition_index": partition, "error_code": code, "error_message": message})
    return _response(ctx.version, ErrorCode.none, None,
                     [{"name": t, "partitions": ps} for t, ps in by_topic.items()])


def _response(version: int, code: int, message: str | None, responses: list):
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": code,
                                                  "error_message": message, "responses": responses})


def error_response(request, code: int, message: str | None = None):
    message = MESSAGES.get(code) if message is None else message
    """AlterPartitionReassignmentsRequest.getErrorResponse: every partition and the top level."""
    return _response(request.version, code, message, [
        {"name": t.name, "partitions": [{"partition_index": p.partition_index, "error_code": code,
                                         "error_message": message} for p in t.partitions]}
        for t in request.body.topics])
