"""EndTxn v0-v3: commit or abort the producer's transaction (KafkaApis.handleEndTxnRequest).

Versions: v1 nothing new; v2 PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before); v3 flexible.
The answer comes once PrepareCommit/PrepareAbort is in __transaction_state; the markers follow.
Authorization: WRITE on the TransactionalId.
"""

from typing import TYPE_CHECKING

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .txn_common import fenced, transactional_id_key, txn_error

if TYPE_CHECKING:
    # what `ctx.transactions` is (context.py), named here so the call below can be followed from this file
    from fauxka.coordinator.txn.coordinator import TransactionCoordinator  # noqa: F401

    from ..protocol.requests import EndTxnRequest

_KEY = 26
coordinator_key = transactional_id_key


def _answer(version: int, code) -> object:
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": fenced(code, version, 2)})


async def handle(ctx: RequestContext, request: "EndTxnRequest") -> Response:
    error = txn_error(ctx, request.transactional_id)
    if error is None:
        error = await ctx.transactions.end_txn(request.transactional_id, request.producer_id, request.producer_epoch,
                                               request.committed)
    return _answer(ctx.version, error)


def error_response(request, code):
    return _answer(request.version, code)
