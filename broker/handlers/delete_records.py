"""DeleteRecords v0-v2: move partitions' log start offsets forward (KIP-107).

Versions: v1 nothing new; v2 flexible. Delete on the topic, else TOPIC_AUTHORIZATION_FAILED;
only the leader answers. offset -1 means the high watermark; an offset beyond the high
watermark (or negative) is OFFSET_OUT_OF_RANGE (ReplicaManager.deleteRecordsOnLocalLog). The
answer's low_watermark is the new log start offset; followers take it from their next fetch
(Kafka also waits for them in DelayedDeleteRecords; fauxka answers once the leader moved).
"""

from model.errors import ErrorCode, KafkaError

from ..protocol.build import build
from ..protocol.codec import response_schema

_KEY = 21


async def handle(ctx, request):
    replicas = ctx.broker.replicas
    topics = []
    for topic in request.topics:
        allowed = ctx.authorized("DELETE", "TOPIC", topic.name)
        known = topic.name in ctx.cache.topics
        partitions = []
        for p in topic.partitions:
            entry = {"partition_index": p.partition_index, "low_watermark": -1, "error_code": ErrorCode.none}
            if not allowed:
                entry["error_code"] = ErrorCode.topic_authorization_failed
            elif not known:
                entry["error_code"] = ErrorCode.unknown_topic_or_partition
            else:
                try:
                    entry["low_watermark"] = replicas.delete_records(topic.name, p.partition_index, p.offset)
                except KafkaError as exc:
                    entry["error_code"] = exc.code
            partitions.append(entry)
        topics.append({"name": topic.name, "partitions": partitions})
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "topics": topics})
