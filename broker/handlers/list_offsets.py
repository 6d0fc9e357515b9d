"""ListOffsets v1-v9: translate to ReplicaManager.offset_for and back.

Versions: v1 one offset per partition with its timestamp (v0's old_style_offsets are not in
kio); v2 isolation_level (latest = last stable offset for read_committed); v4
current_leader_epoch fencing and leader_epoch in the answer (KIP-320); v6 flexible; v7 max
timestamp -3 (KIP-734); v8 earliest local -4 (KIP-405: the earliest offset here); v9 latest
tiered -5 (no tiered storage: -1). DESCRIBE on the topic, else TOPIC_AUTHORIZATION_FAILED. Only
the leader answers (replica_id -1); a debug replica id (-2) is answered by the leader too.
"""

from model.errors import ErrorCode, KafkaError

from ..protocol.build import build
from ..protocol.codec import response_schema

_KEY = 2


async def handle(ctx, request):
    replicas = ctx.broker.replicas
    isolation = int(getattr(request, "isolation_level", 0))
    topics = []
    for topic in request.topics:
        allowed = ctx.authorized("DESCRIBE", "TOPIC", topic.name)
        known = topic.name in ctx.cache.topics
        partitions = []
        for p in topic.partitions:
            entry = {"partition_index": p.partition_index, "error_code": ErrorCode.none, "timestamp": -1,
                     "offset": -1, "leader_epoch": -1}
            if not allowed:
                entry["error_code"] = ErrorCode.topic_authorization_failed
            elif not known:
                entry["error_code"] = ErrorCode.unknown_topic_or_partition
            else:
                try:
                    timestamp, offset, epoch = replicas.offset_for(topic.name, p.partition_index, p.timestamp,
                                                                   isolation, getattr(p, "current_leader_epoch", -1))
                    entry.update(timestamp=timestamp, offset=offset, leader_epoch=epoch)
                except KafkaError as exc:
                    entry["error_code"] = exc.code
            partitions.append(entry)
        topics.append({"name": topic.name, "partitions": partitions})
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "topics": topics})
