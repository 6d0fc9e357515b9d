"""LeaderAndIsr v0-v7 (ZooKeeper mode): the active controller tells a partition's replicas its
leader, leader epoch, ISR, partition epoch and replicas; each becomes leader or follower.

v0-v1 list partition states with their topic names, v2+ group them by topic (and add the broker
epoch); v1 adds is_new, v3 adding and removing replicas, v4 is flexible, v5 topic ids and the
request Type (and answers per topic id), v6 leader_recovery_state, v7 is_kraft_controller.
Kafka (KafkaApis.handleLeaderAndIsrRequest, ReplicaManager.becomeLeaderOrFollower): see
from_controller.py for the refusals (answered at the top and for every partition); else a state
is taken when its partition epoch is newer than the one held (an older or equal one changes
nothing, as Kafka's leader epoch check) and every partition answers NONE. The replica manager
follows the cache: a replica is created, led or followed as the state says. As in Kafka, a
LeaderAndIsr does not add to what Metadata answers (only UpdateMetadata does: a new topic's
partitions all at once, never only those this broker replicates).
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..metadata_pushed import partition_state
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .from_controller import grouped, refusal

if TYPE_CHECKING:
    from ..protocol.requests import LeaderAndIsrRequest

_KEY = 4


async def handle(ctx: RequestContext, request: "LeaderAndIsrRequest") -> Response:
    refused = refusal(ctx, request)
    if refused is not None:
        return error_response(ctx.request, refused)
    cache = ctx.cache
    topics = grouped(request, ctx.version, 1)
    for topic, topic_id, states in topics:
        partitions = {s.partition_index: (list(s.replicas), partition_state(s)) for s in states}
        adding = removing = None  # before v3: the reassignment's replicas are not named, kept as held
        if ctx.version >= 3:
            adding = {s.partition_index: list(s.adding_replicas) for s in states if s.adding_replicas}
            removing = {s.partition_index: list(s.removing_replicas) for s in states if s.removing_replicas}
        cache.apply_pushed(topic, topic_id or _known_id(cache, topic), partitions, adding, removing, announce=False)
    return _answer(ctx.version, ErrorCode.none, topics, cache)


def _known_id(cache, topic: str):
    assignment = cache.all_topics.get(topic)
    return assignment.topic_id if assignment is not None else None


def _answer(version: int, code: ErrorCode, topics, cache=None):
    if version < 5:
        errors = [{"topic_name": topic, "partition_index": s.partition_index, "error_code": code}
                  for topic, _, states in topics for s in states]
        return build(response_schema(_KEY, version), {"error_code": code, "partition_errors": errors})
    answered = [{"topic_id": topic_id or (_known_id(cache, topic) if cache is not None else None),
                 "partition_errors": [{"partition_index": s.partition_index, "error_code": code} for s in states]}
                for topic, topic_id, states in topics]
    return build(response_schema(_KEY, version), {"error_code": code, "topics": answered})


def error_response(request, code):
    """LeaderAndIsrRequest.getErrorResponse: the error at the top and for every partition."""
    return _answer(request.version, code, grouped(request.body, request.version, 1))
