"""DeleteRecords v0-v2: move partitions' log start offsets forward (KIP-107).

Versions: v1 nothing new; v2 flexible. Delete on the topic, else TOPIC_AUTHORIZATION_FAILED;
only the leader answers. offset -1 means the high watermark; an offset beyond the high
watermark (or negative) is OFFSET_OUT_OF_RANGE (ReplicaManager.deleteRecordsOnLocalLog). The
answer's low_watermark is the new log start offset; followers take it from their next fetch
(Kafka also waits for them in DelayedDeleteRecords; fauxka answers once the leader moved).
"""

from model.errors import ErrorCode

from ..protocol.build import build
from ..protocol.codec import response_schema
from .partition_results import partition_results

_KEY = 21


async def handle(ctx, request):
    replicas = ctx.broker.replicas
    topics = [{"name": topic.name, "partitions": partition_results(
        ctx, ctx.authorized("DELETE", "TOPIC", topic.name), topic.name, topic.partitions,
        lambda p: {"partition_index": p.partition_index, "low_watermark": -1, "error_code": ErrorCode.none},
        lambda p, t=topic.name: {"low_watermark": replicas.delete_records(t, p.partition_index, p.offset)})}
        for topic in request.topics]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "topics": topics})
