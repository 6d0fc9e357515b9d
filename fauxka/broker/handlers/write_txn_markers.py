"""WriteTxnMarkers v0-v1: the transaction coordinator asks this partition leader to append COMMIT
or ABORT control batches (KafkaApis.handleWriteTxnMarkersRequest; fauxka/broker/coordination/txn_markers.py writes them).

Versions: v1 flexible (v0 derived in fauxka/broker/protocol/old_versions.py). Authorization: CLUSTER_ACTION
on the Cluster. A partition this broker does not lead answers NOT_LEADER_OR_FOLLOWER, an unknown
one UNKNOWN_TOPIC_OR_PARTITION; the coordinator retries them at the new leader.
"""

from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import WriteTxnMarkersRequest

_KEY = 27


def _answer(version: int, markers: list[tuple[int, dict[tuple[str, int], ErrorCode]]]):
    out = []
    for producer_id, results in markers:
        topics: dict[str, list] = {}
        for (topic, index), code in results.items():
            topics.setdefault(topic, []).append({"partition_index": index, "error_code": code})
        out.append({"producer_id": producer_id, "topics": [{"name": n, "partitions": ps} for n, ps in topics.items()]})
    return build(response_schema(_KEY, version), {"markers": out})


def _wanted(marker) -> list[tuple[str, int]]:
    return [(t.name, int(p)) for t in marker.topics for p in t.partition_indexes]


async def handle(ctx: RequestContext, request: "WriteTxnMarkersRequest") -> Response:
    if not ctx.authorized("CLUSTER_ACTION", "CLUSTER", CLUSTER_NAME):
        return error_response(ctx.request, ErrorCode.cluster_authorization_failed)
    answers = []
    timeout_ms = ctx.config["request.timeout.ms"]
    for marker in request.markers:
        wanted = _wanted(marker)
        known = [tp for tp in wanted if tp in ctx.replicas.partitions]
        results = dict.fromkeys(wanted, ErrorCode.unknown_topic_or_partition)
        if known:
            results.update(await ctx.partition_writer.write_markers(
                marker.producer_id, marker.producer_epoch, marker.transaction_result, marker.coordinator_epoch, known,
                timeout_ms))
        answers.append((marker.producer_id, results))
    return _answer(ctx.version, answers)


def error_response(request, code):
    return _answer(request.version, [(m.producer_id, dict.fromkeys(_wanted(m), code)) for m in request.body.markers])
