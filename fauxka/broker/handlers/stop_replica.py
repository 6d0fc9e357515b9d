"""StopReplica v0-v4 (ZooKeeper mode): the active controller tells a broker to stop its replicas of
some partitions, and to delete them when their topic is deleted (TopicDeletionManager).

v0 lists (topic, partition) pairs, v1-v2 group partition indexes by topic (v1 adds the broker
epoch, v2 is flexible), all with one delete_partitions flag; v3 names each partition's leader
epoch and its own delete_partition flag; v4 adds is_kraft_controller.
Kafka (KafkaApis.handleStopReplicaRequest, ReplicaManager.stopReplicas): see from_controller.py
for the refusals (answered at the top and for every partition); else every partition answers NONE.
A deleted partition leaves the cache (its topic with its last partition) and the replica manager
deletes its log. Without deletion (a replica reassigned away) nothing is done here: the replica
manager follows the topic's assignment, which the controller changed first.
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .from_controller import refusal

if TYPE_CHECKING:
    from ..protocol.requests import StopReplicaRequest

_KEY = 5


def _partitions(request, version: int) -> list[tuple[str, int, bool]]:
    """(topic, partition, delete) whatever the version."""
    if version == 0:
        return [(p.topic_name, p.partition_index, request.delete_partitions) for p in request.ungrouped_partitions]
    if version <= 2:
        return [(t.name, p, request.delete_partitions) for t in request.topics for p in t.partition_indexes]
    return [(t.topic_name, p.partition_index, p.delete_partition) for t in request.topic_states
            for p in t.partition_states]


async def handle(ctx: RequestContext, request: "StopReplicaRequest") -> Response:
    refused = refusal(ctx, request)
    if refused is not None:
        return error_response(ctx.request, refused)
    partitions = _partitions(request, ctx.version)
    deleted: dict[str, list[int]] = {}
    for topic, p, delete in partitions:
        if delete:
            deleted.setdefault(topic, []).append(p)
    for topic, indexes in deleted.items():
        ctx.cache.drop_pushed(topic, indexes)
    return _answer(ctx.version, ErrorCode.none, partitions)


def _answer(version: int, code: ErrorCode, partitions):
    return build(response_schema(_KEY, version), {"error_code": code, "partition_errors": [
        {"topic_name": topic, "partition_index": p, "error_code": code} for topic, p, _ in partitions]})


def error_response(request, code):
    """StopReplicaRequest.getErrorResponse: the error at the top and for every partition."""
    return _answer(request.version, code, _partitions(request.body, request.version))
