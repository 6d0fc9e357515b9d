"""The checks Kafka's broker makes first on the requests the controller sends it (KafkaApis
handleLeaderAndIsrRequest, handleStopReplicaRequest, handleUpdateMetadataRequest; ReplicaManager
becomeLeaderOrFollower, stopReplicas, maybeUpdateMetadataCache), in Kafka's order:
CLUSTER_ACTION on the Cluster (CLUSTER_AUTHORIZATION_FAILED: they are cluster actions, never a
client's); a broker epoch older than this broker's registration (STALE_BROKER_EPOCH: meant for an
earlier life of this broker; -1 is not checked); a controller epoch older than the newest this
broker knows, from /controller_epoch or an earlier request (STALE_CONTROLLER_EPOCH: a zombie
controller). A request that passes makes its epoch the newest."""

import uuid

from fauxka.model.errors import ErrorCode


def refusal(ctx, request) -> ErrorCode | None:
    """The error to answer with, or None to apply the request."""
    if not ctx.authorized("CLUSTER_ACTION", "CLUSTER", "kafka-cluster"):
        return ErrorCode.cluster_authorization_failed
    cache = ctx.cache
    mine = cache.broker_epochs.get(ctx.broker_id)
    broker_epoch = getattr(request, "broker_epoch", -1)
    if broker_epoch != -1 and mine is not None and broker_epoch < mine:
        return ErrorCode.stale_broker_epoch
    if not cache.accept_controller_epoch(request.controller_epoch):
        ctx.log.warning("request from an old controller refused", api=ctx.request.api.name,
                        controller=request.controller_id, epoch=request.controller_epoch,
                        newest=max(cache.controller_epoch, cache.pushed_controller_epoch))
        return ErrorCode.stale_controller_epoch
    return None


_NO_ID = uuid.UUID(int=0)


def grouped(request, version: int, ungrouped_until: int) -> list[tuple[str, uuid.UUID | None, list]]:
    """(topic name, topic id or None, partition states) whatever the version: versions up to
    `ungrouped_until` list partition states with their topic names, later ones group them by topic."""
    if version <= ungrouped_until:
        topics: dict[str, list] = {}
        for state in request.ungrouped_partition_states:
            topics.setdefault(state.topic_name, []).append(state)
        return [(name, None, states) for name, states in topics.items()]
    return [(t.topic_name, None if getattr(t, "topic_id", None) in (None, _NO_ID) else t.topic_id,
             list(t.partition_states)) for t in request.topic_states]
