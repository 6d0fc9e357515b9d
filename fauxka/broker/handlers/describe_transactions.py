"""DescribeTransactions v0 (KIP-664): the state of transactional ids this broker coordinates
(KafkaApis.handleDescribeTransactionsRequest, TransactionCoordinator.handleDescribeTransactions).

Per id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED without DESCRIBE on the TransactionalId,
INVALID_REQUEST for an empty id, NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when this broker
does not (yet) serve its partition, TRANSACTIONAL_ID_NOT_FOUND for an unknown id. An error leaves
the other fields at the generated message's defaults, as Kafka does: state "", timeout, start
time, producer id and epoch 0, no topics. The start time is the transaction's (kept through
Prepare*/Complete*, -1 once Empty), as TransactionMetadata.txnStartTimestamp.
"""

import datetime
from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import DescribeTransactionsRequest

_KEY = 65


def _time(ms: int) -> datetime.datetime:
    """kio's datetime_i64 field from Kafka's milliseconds (-1: none)."""
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)


def _none(transactional_id: str, code: ErrorCode) -> dict:
    """DescribeTransactionsResponseData.TransactionState with only the error set (defaults: 0, "")."""
    return {"error_code": code, "transactional_id": transactional_id, "transaction_state": "",
            "transaction_timeout": 0, "transaction_start_time": _time(0), "producer_id": 0, "producer_epoch": 0,
            "topics": []}


def _describe(ctx: RequestContext, transactional_id: str) -> dict:
    if not ctx.authorized("DESCRIBE", "TRANSACTIONAL_ID", transactional_id):
        return _none(transactional_id, ErrorCode.transactional_id_authorization_failed)
    if not transactional_id:
        return _none(transactional_id, ErrorCode.invalid_request)
    code = ctx.transactions.status(transactional_id)
    if code != ErrorCode.none:
        return _none(transactional_id, code)
    meta = ctx.transactions.metadata(transactional_id)
    if meta is None:
        return _none(transactional_id, ErrorCode.transactional_id_not_found)
    return {"error_code": ErrorCode.none, "transactional_id": transactional_id,
            "transaction_state": meta.state.display, "transaction_timeout": meta.timeout_ms,
            "transaction_start_time": _time(meta.start_ms),
            "producer_id": meta.producer_id, "producer_epoch": meta.producer_epoch,
            "topics": [{"topic": t, "partitions": ps} for t, ps in meta.partitions_by_topic().items()
                       if ctx.authorized("DESCRIBE", "TOPIC", t, log_if_denied=False)]}


async def handle(ctx: RequestContext, request: "DescribeTransactionsRequest") -> Response:
    return build(response_schema(_KEY, ctx.version), {
        "throttle_time": 0, "transaction_states": [_describe(ctx, t) for t in request.transactional_ids]})


def error_response(request, code):
    return build(response_schema(_KEY, request.version), {
        "throttle_time": 0, "transaction_states": [_none(t, code) for t in request.body.transactional_ids]})
