"""ListOffsets v1-v9: translate to ReplicaManager.offset_for and back.

Versions: v1 one offset per partition with its timestamp (v0's old_style_offsets are not in
kio); v2 isolation_level (latest = last stable offset for read_committed); v4
current_leader_epoch fencing and leader_epoch in the answer (KIP-320); v6 flexible; v7 max
timestamp -3 (KIP-734); v8 earliest local -4 (KIP-405: the earliest offset here); v9 latest
tiered -5 (no tiered storage: -1). DESCRIBE on the topic, else TOPIC_AUTHORIZATION_FAILED. Only
the leader answers (replica_id -1); a debug replica id (-2) is answered by the leader too.
"""

from model.errors import ErrorCode

from ..protocol.build import build
from ..protocol.codec import response_schema
from .partition_results import partition_results

_KEY = 2


async def handle(ctx, request):
    replicas = ctx.broker.replicas
    isolation = int(getattr(request, "isolation_level", 0))
    topics = [{"name": topic.name, "partitions": partition_results(
        ctx, ctx.authorized("DESCRIBE", "TOPIC", topic.name), topic.name, topic.partitions, _blank,
        lambda p, t=topic.name: _answer(replicas, t, p, isolation))} for topic in request.topics]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "topics": topics})


def _blank(p) -> dict:
    return {"partition_index": p.partition_index, "error_code": ErrorCode.none, "timestamp": -1, "offset": -1,
            "leader_epoch": -1}


def _answer(replicas, topic: str, p, isolation: int) -> dict:
    timestamp, offset, epoch = replicas.offset_for(topic, p.partition_index, p.timestamp, isolation,
                                                   getattr(p, "current_leader_epoch", -1))
    return {"timestamp": timestamp, "offset": offset, "leader_epoch": epoch}
