"""DeleteRecords v0-v2: move partitions' log start offsets forward (KIP-107).

Versions: v1 nothing new; v2 flexible. Delete on the topic, else TOPIC_AUTHORIZATION_FAILED;
only the leader answers. offset -1 means the high watermark; an offset beyond the high
watermark (or negative) is OFFSET_OUT_OF_RANGE (ReplicaManager.deleteRecordsOnLocalLog). The
answer waits, as DelayedDeleteRecords, until every live replica's log start offset (reported in
its fetches) reached the offset: low_watermark is then the smallest of them; REQUEST_TIMED_OUT
at the request's timeout.
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .partition_results import partition_results

if TYPE_CHECKING:
    from ..protocol.requests import DeleteRecordsRequest

_KEY = 21


async def handle(ctx: RequestContext, request: "DeleteRecordsRequest") -> Response:
    replicas = ctx.replicas
    topics = [{"name": topic.name, "partitions": partition_results(
        ctx, ctx.authorized("DELETE", "TOPIC", topic.name), topic.name, topic.partitions,
        lambda p: {"partition_index": p.partition_index, "low_watermark": -1, "error_code": ErrorCode.none},
        lambda p, t=topic.name: {"low_watermark": replicas.delete_records(t, p.partition_index, p.offset)})}
        for topic in request.topics]
    targets = {(t["name"], e["partition_index"]): e["low_watermark"] for t in topics for e in t["partitions"]
               if e["error_code"] == ErrorCode.none}
    lows = await replicas.low_watermarks(targets, int(request.timeout.total_seconds() * 1000)) if targets else {}
    for t in topics:
        for e in t["partitions"]:
            low = lows.get((t["name"], e["partition_index"]))
            if isinstance(low, ErrorCode):
                e.update(error_code=low, low_watermark=-1)
            elif low is not None:
                e["low_watermark"] = low
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "topics": topics})
