"""DescribeProducers v0 (KIP-664): the active idempotent / transactional producers of partitions
this broker leads (KafkaApis.handleDescribeProducersRequest, ReplicaManager.activeProducerState).

Per partition: TOPIC_AUTHORIZATION_FAILED without READ on the Topic, UNKNOWN_TOPIC_OR_PARTITION,
NOT_LEADER_OR_FOLLOWER on a follower. Each producer: its epoch, last sequence and timestamp,
coordinator epoch (of its last marker, -1 before one) and the first offset of its ongoing
transaction (-1 when none).
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode, KafkaError

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import DescribeProducersRequest

_KEY = 61


def _partition(ctx: RequestContext, topic: str, index: int, authorized: bool) -> dict:
    out = {"partition_index": index, "error_code": ErrorCode.none, "error_message": None, "active_producers": []}
    if not authorized:
        return {**out, "error_code": ErrorCode.topic_authorization_failed}
    if index not in ctx.cache.partitions_of(topic):
        return {**out, "error_code": ErrorCode.unknown_topic_or_partition}
    try:
        log = ctx.replicas.leader_partition(topic, index).log
    except KafkaError as exc:
        return {**out, "error_code": exc.code}
    out["active_producers"] = [
        {"producer_id": e.producer_id, "producer_epoch": e.epoch, "last_sequence": e.last_seq,
         "last_timestamp": e.last_timestamp, "coordinator_epoch": e.coordinator_epoch,
         "current_txn_start_offset": -1 if e.txn_first_offset is None else e.txn_first_offset}
        for e in log.producers.producers.values()]
    return out


async def handle(ctx: RequestContext, request: "DescribeProducersRequest") -> Response:
    topics = []
    for t in request.topics:
        authorized = ctx.authorized("READ", "TOPIC", t.name)
        topics.append({"name": t.name, "partitions": [_partition(ctx, t.name, int(p), authorized)
                                                      for p in t.partition_indexes]})
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "topics": topics})


def error_response(request, code):
    return build(response_schema(_KEY, request.version), {"throttle_time": 0, "topics": [
        {"name": t.name, "partitions": [{"partition_index": p, "error_code": code, "error_message": None,
                                         "active_producers": []} for p in t.partition_indexes]}
        for t in request.body.topics]})
