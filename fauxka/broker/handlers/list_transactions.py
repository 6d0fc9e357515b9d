"""ListTransactions v0 (KIP-664): the transactional ids this broker coordinates, filtered by state
names and producer ids (KafkaApis.handleListTransactionsRequest,
TransactionStateManager.listTransactionStates).

Only ids the caller may DESCRIBE are listed; state names Kafka does not know are returned in
unknown_state_filters; COORDINATOR_LOAD_IN_PROGRESS while a partition is loading.
"""

from typing import TYPE_CHECKING

from fauxka.coordinator.txn.state import TxnState
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import ListTransactionsRequest

_KEY = 66


async def handle(ctx: RequestContext, request: "ListTransactionsRequest") -> Response:
    if ctx.transactions.loading():
        return error_response(ctx.request, ErrorCode.coordinator_load_in_progress)
    states = {TxnState.from_display(name) for name in request.state_filters} - {None}
    unknown = [name for name in request.state_filters if TxnState.from_display(name) is None]
    pids = set(request.producer_id_filters)
    listed = []
    for transactional_id, meta in ctx.transactions.list_transactions():
        if (request.state_filters and meta.state not in states) or (pids and meta.producer_id not in pids):
            continue
        if not ctx.authorized("DESCRIBE", "TRANSACTIONAL_ID", transactional_id, log_if_denied=False):
            continue
        listed.append({"transactional_id": transactional_id, "producer_id": meta.producer_id,
                       "transaction_state": meta.state.display})
    return build(response_schema(_KEY, ctx.version), {
        "throttle_time": 0, "error_code": ErrorCode.none, "unknown_state_filters": unknown,
        "transaction_states": listed})


def error_response(request, code):
    return build(response_schema(_KEY, request.version), {
        "throttle_time": 0, "error_code": code, "unknown_state_filters": [], "transaction_states": []})
