"""AddOffsetsToTxn v0-v3: add the group's __consumer_offsets partition to the transaction
(KafkaApis.handleAddOffsetsToTxnRequest), so its marker completes the TxnOffsetCommit offsets.

Versions: v1 nothing new; v2 PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before); v3 flexible.
Authorization: WRITE on the TransactionalId, READ on the Group (GROUP_AUTHORIZATION_FAILED).
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode
from fauxka.model.topic_names import GROUP_METADATA_TOPIC

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .txn_common import fenced, transactional_id_key, txn_error

if TYPE_CHECKING:
    from ..protocol.requests import AddOffsetsToTxnRequest

_KEY = 25
coordinator_key = transactional_id_key


def _answer(version: int, code) -> object:
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": fenced(code, version, 2)})


async def handle(ctx: RequestContext, request: "AddOffsetsToTxnRequest") -> Response:
    error = txn_error(ctx, request.transactional_id)
    if error is None and not ctx.authorized("READ", "GROUP", request.group_id):
        error = ErrorCode.group_authorization_failed
    if error is None:
        partition = ctx.groups.partition_of(request.group_id)
        error = await ctx.transactions.add_partitions(request.transactional_id, request.producer_id,
                                                      request.producer_epoch, {(GROUP_METADATA_TOPIC, partition)})
    return _answer(ctx.version, error)


def error_response(request, code):
    return _answer(request.version, code)
