"""InitProducerId v0-v5 for idempotent producers (no transactional id).

Versions: v1 nothing new; v2 flexible; v3 producer_id/producer_epoch of the caller (KIP-360,
bumping the epoch of a transactional producer); v4 PRODUCER_FENCED replaces INVALID_PRODUCER_EPOCH
for the caller; v5 nothing new for a broker. Without a transactional id Kafka hands out a new
producer id with epoch 0 whatever the request carries (TransactionCoordinator.handleInitProducerId).
Authorization: IdempotentWrite on the cluster, or Write on some topic (KIP-679), else
CLUSTER_AUTHORIZATION_FAILED. A transactional id needs Write on it
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED); with no transaction coordinator yet it is answered
COORDINATOR_NOT_AVAILABLE, which clients retry after FindCoordinator.
"""

from model.acl_model import CLUSTER_NAME
from model.errors import ErrorCode, KafkaError

from ..protocol.build import build
from ..protocol.codec import response_schema

_KEY = 22


async def handle(ctx, request):
    producer_id, error = -1, ErrorCode.none
    if request.transactional_id is not None:
        if not ctx.authorized("WRITE", "TRANSACTIONAL_ID", request.transactional_id):
            error = ErrorCode.transactional_id_authorization_failed
        else:
            error = ErrorCode.coordinator_not_available
    elif not (ctx.authorized("IDEMPOTENT_WRITE", "CLUSTER", CLUSTER_NAME, log_if_denied=False)
              or any(ctx.authorized("WRITE", "TOPIC", t, log_if_allowed=False, log_if_denied=False)
                     for t in ctx.cache.topics)):
        error = ErrorCode.cluster_authorization_failed
    else:
        try:
            producer_id = await ctx.broker.producer_ids.generate()
        except KafkaError as exc:
            error = exc.code
    return build(response_schema(_KEY, ctx.version), {
        "throttle_time": 0, "error_code": error, "producer_id": producer_id,
        "producer_epoch": 0 if error == ErrorCode.none else -1,
    })
