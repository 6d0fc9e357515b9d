"""The checks Kafka makes first on every broker-to-controller request (AlterPartition,
AllocateProducerIds, ControlledShutdown): CLUSTER_ACTION on the Cluster, the active controller,
and, where the request names one, a live broker whose epoch (the czxid of its registration)
matches. fauxka accepts broker epoch -1 as "unknown", as ControlledShutdown v0-v1 imply."""

from fauxka.model.errors import ErrorCode

from ..context import RequestContext


def refusal(ctx: RequestContext, broker_id: int | None = None, broker_epoch: int = -1) -> ErrorCode | None:
    """The error to answer with, or None to go on."""
    if not ctx.authorized("CLUSTER_ACTION", "CLUSTER", "kafka-cluster"):
        return ErrorCode.cluster_authorization_failed
    if not ctx.controller.active:
        return ErrorCode.not_controller
    if broker_id is not None:
        known = ctx.cache.broker_epochs.get(broker_id)
        if known is None or broker_epoch not in (-1, known):
            return ErrorCode.stale_broker_epoch
    return None
