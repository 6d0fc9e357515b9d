"""OffsetForLeaderEpoch v0-v4: the end offset of a leader epoch in the leader's epoch cache.

Versions: v1 leader_epoch in the answer; v2 current_leader_epoch fencing (KIP-320) and
throttle_time; v3 replica_id (not used to authorize: Kafka 3.9 wants ClusterAction on the cluster, else
Describe on each topic, which is what makes Java clients use it: KIP-320 `supportsTopicPermission`);
v4 flexible.
v0-v1 are derived in protocol/old_versions.py. The answer is the largest epoch <= the one asked for
and where it ends (the log end offset for the leader's current epoch); an epoch before the cache's
first: -1/-1 (UNDEFINED), no error.
"""

from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .partition_results import partition_results

if TYPE_CHECKING:
    from ..protocol.requests import OffsetForLeaderEpochRequest

_KEY = 23


async def handle(ctx: RequestContext, request: "OffsetForLeaderEpochRequest") -> Response:
    replicas = ctx.replicas
    # Kafka 3.9: ClusterAction on the cluster, else Describe per topic, whatever the replica id
    cluster_action = ctx.authorized("CLUSTER_ACTION", "CLUSTER", CLUSTER_NAME, log_if_denied=False)
    topics = [{"topic": topic.topic, "partitions": partition_results(
        ctx, cluster_action or ctx.authorized("DESCRIBE", "TOPIC", topic.topic), topic.topic,
        topic.partitions,
        lambda p: {"partition": p.partition, "error_code": ErrorCode.none, "leader_epoch": -1, "end_offset": -1},
        lambda p, t=topic.topic: dict(zip(("leader_epoch", "end_offset"), replicas.end_offset_for_epoch(
            t, p.partition, p.leader_epoch, p.current_leader_epoch))))}
        for topic in request.topics]
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "topics": topics})
