"""UpdateMetadata v0-v8 (ZooKeeper mode): the active controller tells every broker the partitions'
leaders, ISRs and replicas (and the live brokers), which its metadata cache serves from then on.

v0-v4 list partition states with their topic names, v5+ group them by topic (and add the broker
epoch); v1 adds broker endpoints, v2 the rack, v3 listener names, v4 offline replicas, v6 is
flexible, v7 adds topic ids, v8 is_kraft_controller (and a tagged Type fauxka does not read).
Kafka (KafkaApis.handleUpdateMetadataRequest, ZkMetadataCache.updateMetadata): see
from_controller.py for the refusals; else the states are applied, a partition whose leader is
LeaderDuringDelete (-2) is removed (its topic with its last partition), and the answer is NONE.
fauxka's brokers keep the live broker list from their registrations' watches.
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
    from ..protocol.requests import UpdateMetadataRequest

_KEY = 6
LEADER_DURING_DELETE = -2


async def handle(ctx: RequestContext, request: "UpdateMetadataRequest") -> Response:
    refused = refusal(ctx, request)
    if refused is not None:
        return error_response(ctx.request, refused)
    cache = ctx.cache
    for topic, topic_id, states in grouped(request, ctx.version, 4):
        deleted = [s.partition_index for s in states if s.leader == LEADER_DURING_DELETE]
        if deleted:
            cache.drop_pushed(topic, deleted)
        kept = {s.partition_index: (list(s.replicas), partition_state(s)) for s in states
                if s.leader != LEADER_DURING_DELETE}
        if kept:
            cache.apply_pushed(topic, topic_id, kept)
    return build(response_schema(_KEY, ctx.version), {"error_code": ErrorCode.none})


def error_response(request, code):
    return build(response_schema(_KEY, request.version), {"error_code": code})
