"""InitProducerId v0-v5: idempotent producers, and transactional ones through their coordinator.

Versions: v1 nothing new; v2 flexible; v3 producer_id/producer_epoch of the caller (KIP-360,
bumping the epoch of a transactional producer); v4 PRODUCER_FENCED replaces INVALID_PRODUCER_EPOCH
for the caller; v5 nothing new for a broker. Without a transactional id Kafka hands out a new
producer id with epoch 0 whatever the request carries (TransactionCoordinator.handleInitProducerId).
Authorization: IdempotentWrite on the cluster, or Write on some topic (KIP-679), else
CLUSTER_AUTHORIZATION_FAILED. A transactional id needs Write on it
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and is answered by its transaction coordinator
(fauxka/coordinator/txn/coordinator.py: a new id, an epoch bump, or fencing an open transaction).
"""

from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode, KafkaError

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .txn_common import fenced, txn_error

if TYPE_CHECKING:
    from ..protocol.requests import InitProducerIdRequest

_KEY = 22


def coordinator_key(request) -> str | None:
    """A transactional id's coordinator answers; an idempotent producer any broker."""
    return request.body.transactional_id or None


async def handle(ctx: RequestContext, request: "InitProducerIdRequest") -> Response:
    producer_id, epoch, error = -1, 0, ErrorCode.none
    if request.transactional_id is not None:
        error = txn_error(ctx, request.transactional_id) or ErrorCode.none
        if error == ErrorCode.none:
            v3 = ctx.version >= 3
            error, producer_id, epoch = await ctx.transactions.init_producer_id(
                request.transactional_id, int(request.transaction_timeout.total_seconds() * 1000),
                request.producer_id if v3 else -1, request.producer_epoch if v3 else -1)
            error = fenced(error, ctx.version, 4)
    elif not (ctx.authorized("IDEMPOTENT_WRITE", "CLUSTER", CLUSTER_NAME, log_if_denied=False)
              or any(ctx.authorized("WRITE", "TOPIC", t, log_if_allowed=False, log_if_denied=False)
                     for t in ctx.cache.topics)):
        error = ErrorCode.cluster_authorization_failed
    else:
        try:
            producer_id = await ctx.producer_ids.generate()
        except KafkaError as exc:
            error = exc.code
    return build(response_schema(_KEY, ctx.version), {
        "throttle_time": 0, "error_code": error, "producer_id": producer_id,
        "producer_epoch": epoch if error == ErrorCode.none else -1,
    })


def error_response(request, code):
    return build(response_schema(_KEY, request.version), {
        "throttle_time": 0, "error_code": code, "producer_id": -1, "producer_epoch": -1})
