"""ListOffsets v0-v9: translate to ReplicaManager.offset_for (v0: legacy_offsets) and back.

Versions: v0 up to max_num_offsets segment-boundary offsets in old_style_offsets (Kafka 3.9
`handleListOffsetRequestV0`: a timestamp below -2 is UNSUPPORTED_VERSION; replica id -1 is a
consumer, whose list is bounded by the high watermark); v1 one offset per partition with its
timestamp; v2 isolation_level (latest = last stable offset for read_committed); v4
current_leader_epoch fencing and leader_epoch in the answer (KIP-320); v6 flexible; v7 max
timestamp -3 (KIP-734); v8 earliest local -4 (KIP-405: the earliest offset here); v9 latest
tiered -5 (no tiered storage: -1). DESCRIBE on the topic, else TOPIC_AUTHORIZATION_FAILED. Only
the leader answers (replica_id -1); a debug replica id (-2) is answered by the leader too, up to the
log end (Kafka gives it no isolation level). A new leader whose high watermark has not reached the
start of its epoch answers a consumer OFFSET_NOT_AVAILABLE for the latest offset (v5+; before v5
LEADER_NOT_AVAILABLE), as KafkaApis does (KIP-392).
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode, KafkaError

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .partition_results import partition_results

if TYPE_CHECKING:
    from ..protocol.requests import ListOffsetsRequest

_KEY = 2


async def handle(ctx: RequestContext, request: "ListOffsetsRequest") -> Response:
    replicas = ctx.replicas
    isolation = int(getattr(request, "isolation_level", 0))
    if ctx.version == 0:
        answer = _v0_answer(replicas, request.replica_id == -1)
        topics = [{"name": topic.name, "partitions": partition_results(
            ctx, ctx.authorized("DESCRIBE", "TOPIC", topic.name), topic.name, topic.partitions, _blank,
            lambda p, t=topic.name: answer(t, p))} for topic in request.topics]
        return build(response_schema(_KEY, 0), {"topics": topics})
    topics = [{"name": topic.name, "partitions": partition_results(
        ctx, ctx.authorized("DESCRIBE", "TOPIC", topic.name), topic.name, topic.partitions, _blank,
        lambda p, t=topic.name: _answer(replicas, t, p, isolation if request.replica_id == -1 else None,
                                        ctx.version))} for topic in request.topics]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "topics": topics})


def _blank(p) -> dict:
    return {"partition_index": p.partition_index, "error_code": ErrorCode.none, "timestamp": -1, "offset": -1,
            "leader_epoch": -1, "old_style_offsets": ()}


def _v0_answer(replicas, from_consumer: bool):
    def answer(topic: str, p) -> dict:
        if p.timestamp < -2:  # v0 knows only LATEST (-1) and EARLIEST (-2) among the negative ones
            return {"error_code": ErrorCode.unsupported_version}
        return {"old_style_offsets": replicas.legacy_offsets(topic, p.partition_index, p.timestamp,
                                                             p.max_num_offsets, from_consumer)}
    return answer


def _answer(replicas, topic: str, p, isolation: int | None, version: int) -> dict:
    """`isolation`: None for a replica's (debugging) request, which may see past the high watermark."""
    try:
        timestamp, offset, epoch = replicas.offset_for(topic, p.partition_index, p.timestamp, isolation,
                                                       getattr(p, "current_leader_epoch", -1))
    except KafkaError as exc:  # KafkaApis: only v5+ may be told OFFSET_NOT_AVAILABLE
        if exc.code == ErrorCode.offset_not_available and version < 5:
            raise KafkaError(ErrorCode.leader_not_available) from exc
        raise
    return {"timestamp": timestamp, "offset": offset, "leader_epoch": epoch}
