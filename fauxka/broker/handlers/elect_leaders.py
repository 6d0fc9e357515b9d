"""ElectLeaders v0-v2 (KIP-183, KIP-460): preferred or unclean leader election, on the controller.

v0 has no election_type (preferred) and no top-level error_code; v1 adds both (0 preferred,
1 unclean); v2 is flexible. Forwardable: a broker that is not the controller forwards it.
Kafka (KafkaApis.handleElectLeaders, KafkaController.processReplicaLeaderElection): ALTER on
the Cluster, else every named partition CLUSTER_AUTHORIZATION_FAILED (top level too, v1+);
topic_partitions null means every partition; per partition UNKNOWN_TOPIC_OR_PARTITION "The
partition does not exist.", ELECTION_NOT_NEEDED (preferred: already led by the preferred replica;
unclean: led by a live broker), PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE
"Failed to elect leader for partition t-p under strategy ...". Results come once the controller
has written the new leaders (Kafka waits in DelayedElectLeader for the same); a forwarding broker
passes them on once its own cache shows them (after_forward), so a Metadata there agrees.
"""

from collections import defaultdict
from typing import TYPE_CHECKING

from fauxka.model.errors import ControllerMoved, ErrorCode, StoreUnavailable

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .admin_common import forwarded_wait_s

if TYPE_CHECKING:
    from ..protocol.requests import ElectLeadersRequest

_KEY = 43


async def handle(ctx: RequestContext, request: "ElectLeadersRequest") -> Response:
    named = None if request.topic_partitions is None else [
        (t.topic, p) for t in request.topic_partitions for p in t.partitions]
    if not ctx.authorized("ALTER", "CLUSTER", "kafka-cluster"):
        return _uniform(ctx, named, ErrorCode.cluster_authorization_failed)
    if not ctx.controller.active:
        return _uniform(ctx, named, ErrorCode.not_controller)
    preferred = getattr(request, "election_type", 0) == 0
    try:
        results = await ctx.controller.leadership.elect_leaders(preferred, named)
    except ControllerMoved:
        return _uniform(ctx, named, ErrorCode.not_controller)
    except StoreUnavailable:
        return _uniform(ctx, named, ErrorCode.request_timed_out)
    return _response(ctx, ErrorCode.none, results)


def _uniform(ctx: RequestContext, named, error: ErrorCode):
    message = None
    return _response(ctx, error, {key: (error, message) for key in named or ()})


def _response(ctx: RequestContext, top_level: ErrorCode, results: dict):
    by_topic = defaultdict(list)
    for (topic, partition), (error, message) in results.items():
        by_topic[topic].append({"partition_id": partition, "error_code": error, "error_message": message})
    return build(response_schema(_KEY, ctx.version), {
        "throttle_time": 0, "error_code": top_level,
        "replica_election_results": [{"topic": t, "partition_result": ps} for t, ps in by_topic.items()]})


async def after_forward(ctx: RequestContext, request, response, received: float) -> None:
    """Until this broker's cache shows every elected partition led by its preferred replica
    (PREFERRED) or by a live broker (UNCLEAN), bounded by the request's timeout."""
    elected = {(t.topic, p.partition_id) for t in response.replica_election_results for p in t.partition_result
               if int(p.error_code) == 0}
    if not elected:
        return
    cache, preferred = ctx.cache, getattr(request, "election_type", 0) == 0

    def shown(key) -> bool:
        state = cache.partition_states.get(key)
        replicas = cache.partitions_of(key[0]).get(key[1])
        if state is None or not replicas:
            return False
        return state.leader == replicas[0] if preferred else state.leader in cache.brokers

    def complete(topics: set[str]) -> set[str]:
        return {t for t in topics if all(shown(k) for k in elected if k[0] == t)}

    purgatory = ctx.controller.purgatory
    await purgatory.wait({t for t, _ in elected}, complete, forwarded_wait_s(ctx, request, received))
