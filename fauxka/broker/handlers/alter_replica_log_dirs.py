"""AlterReplicaLogDirs v0-v2 (KIP-113): move replicas this broker holds into another of its
log.dirs. v1 is v0 (responses sent before throttling); v2 flexible.

Kafka (KafkaApis.handleAlterReplicaLogDirsRequest, ReplicaManager.alterReplicaLogDirs): ALTER on
the Cluster, else every partition CLUSTER_AUTHORIZATION_FAILED. The request becomes a Map
(a partition named under two dirs goes to the last). Per partition: INVALID_TOPIC_EXCEPTION for
a name too long for the future log's directory, LOG_DIR_NOT_FOUND for a path that is not one of
log.dirs as configured (absolute), REPLICA_NOT_AVAILABLE for a partition of a known topic this
broker holds no replica of (the dir is kept for when it gets one), UNKNOWN_TOPIC_OR_PARTITION for
an unknown one, KAFKA_STORAGE_ERROR when the files cannot move. The response has no messages.
"""

from collections import defaultdict
from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import AlterReplicaLogDirsRequest

_KEY = 34


async def handle(ctx: RequestContext, request: "AlterReplicaLogDirsRequest") -> Response:
    if not ctx.authorized("ALTER", "CLUSTER", CLUSTER_NAME):
        return error_response(ctx.request, ErrorCode.cluster_authorization_failed)
    wanted: dict[tuple[str, int], str] = {}
    for d in request.dirs:
        for topic in d.topics:
            for p in topic.partitions:
                wanted.pop((topic.name, int(p)), None)
                wanted[(topic.name, int(p))] = d.path
    replicas = ctx.replicas
    by_topic = defaultdict(list)
    for (topic, index), path in wanted.items():
        by_topic[topic].append({"partition_index": index, "error_code": replicas.alter_log_dir(topic, index, path)})
    return build(response_schema(_KEY, ctx.version), {
        "throttle_time": 0, "results": [{"topic_name": t, "partitions": ps} for t, ps in by_topic.items()]})


def error_response(request, code: int):
    """AlterReplicaLogDirsRequest.getErrorResponse: every partition, by dir and topic as asked."""
    return build(response_schema(_KEY, request.version), {"throttle_time": 0, "results": [
        {"topic_name": t.name, "partitions": [{"partition_index": p, "error_code": code} for p in t.partitions]}
        for d in request.body.dirs for t in d.topics]})
