"""TxnOffsetCommit v0-v3: offsets committed inside a transaction (KafkaApis.handleTxnOffsetCommitRequest);
appended to the group's __consumer_offsets partition as the producer's transactional batch, they
become the group's committed offsets when the COMMIT marker reaches that partition
(fauxka/coordinator/group/txn_offsets.py), and are dropped on ABORT.

Versions: v1 nothing new; v2 committed_leader_epoch; v3 (KIP-447) generation_id, member_id,
group_instance_id, flexible. Sent to the group coordinator.
Authorization: WRITE on the TransactionalId, READ on the Group, READ on each Topic.
"""

from typing import TYPE_CHECKING

from fauxka.coordinator.group.coordinator import OffsetRequest
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .group_common import group_error, group_id_key, offsets_to_commit

if TYPE_CHECKING:
    from ..protocol.requests import TxnOffsetCommitRequest

_KEY = 28
coordinator_key = group_id_key


def _partitions(request) -> list[tuple[str, int]]:
    return [(t.name, p.partition_index) for t in request.topics for p in t.partitions]


def _answer(version: int, results: dict, order: list[tuple[str, int]]):
    topics: dict[str, list] = {}
    for tp in order:
        topics.setdefault(tp[0], []).append({"partition_index": tp[1], "error_code": results[tp]})
    return build(response_schema(_KEY, version), {
        "throttle_time": 0, "topics": [{"name": n, "partitions": ps} for n, ps in topics.items()]})


async def handle(ctx: RequestContext, request: "TxnOffsetCommitRequest") -> Response:
    version = ctx.version
    order = _partitions(request)
    error = None
    if not ctx.authorized("WRITE", "TRANSACTIONAL_ID", request.transactional_id):
        error = ErrorCode.transactional_id_authorization_failed
    else:
        error = group_error(ctx, request.group_id)
    if error is not None:
        return _answer(version, dict.fromkeys(order, error), order)
    results, wanted = offsets_to_commit(ctx, request.topics, lambda p: OffsetRequest(
        p.committed_offset, p.committed_leader_epoch if version >= 2 else -1, p.committed_metadata))
    if wanted:
        v3 = version >= 3
        results.update(await ctx.groups.txn_commit_offsets(
            request.group_id, request.producer_id, request.producer_epoch, request.member_id if v3 else "",
            request.group_instance_id if v3 else None, request.generation_id if v3 else -1, wanted))
    return _answer(version, results, order)


def error_response(request, code):
    order = _partitions(request.body)
    return _answer(request.version, dict.fromkeys(order, code), order)
