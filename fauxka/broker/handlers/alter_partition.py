"""AlterPartition v0-v3 (KIP-497): a partition leader asks the controller to record a new ISR.

v0: topics by name, new_isr as broker ids; v1 adds leader_recovery_state; v2 names topics by
id (UNKNOWN_TOPIC_ID for an unknown one) and answers INELIGIBLE_REPLICA where v0-v1 answer
OPERATION_NOT_ATTEMPTED; v3 sends new_isr_with_epochs (broker id and epoch per replica).
Kafka (KafkaApis.handleAlterPartitionRequest, KafkaController.tryProcessAlterPartition):
CLUSTER_ACTION on the Cluster, else top-level CLUSTER_AUTHORIZATION_FAILED; not the controller:
top-level NOT_CONTROLLER; an unknown broker or a broker epoch other than its registration's:
top-level STALE_BROKER_EPOCH (fauxka accepts -1, "unknown", as ControlledShutdown does).
Per partition: see controller.leader_election.check_alter_partition; written states come
back with leader, leader epoch, ISR and the new partition epoch (the znode version).
"""

from collections import defaultdict
from typing import TYPE_CHECKING

from fauxka.controller.leader_election import IsrChange
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .admin_common import ZERO_UUID
from .broker_to_controller import refusal

if TYPE_CHECKING:
    from ..protocol.requests import AlterPartitionRequest

_KEY = 56


async def handle(ctx: RequestContext, request: "AlterPartitionRequest") -> Response:
    v = ctx.version
    refused = refusal(ctx, request.broker_id, request.broker_epoch)
    if refused is not None:
        return _top_level(v, refused)
    changes, names, unknown_ids = {}, {}, []
    for topic in request.topics:
        name = topic.topic_name if v < 2 else ctx.cache.topic_by_id(topic.topic_id)
        if name is None:
            unknown_ids.append(topic)
            continue
        names[name] = topic.topic_name if v < 2 else topic.topic_id
        for p in topic.partitions:
            isr = [b.broker_id for b in p.new_isr_with_epochs] if v >= 3 else list(p.new_isr)
            changes[(name, p.partition_index)] = IsrChange(request.broker_id, p.leader_epoch, isr, p.partition_epoch,
                                                           getattr(p, "leader_recovery_state", 0))
    results = await ctx.controller.leadership.alter_partition(changes, v)
    by_topic = defaultdict(list)
    for (name, partition), (error, state) in results.items():
        entry = {"partition_index": partition, "error_code": error, "leader_id": -1, "leader_epoch": -1,
                 "isr": [], "partition_epoch": -1}
        if error == ErrorCode.none and state is not None:
            entry.update(leader_id=state.leader, leader_epoch=state.leader_epoch, isr=state.isr,
                         partition_epoch=state.zk_version)
        by_topic[name].append(entry)
    topics = [_topic(v, names[name], parts) for name, parts in by_topic.items()]
    for topic in unknown_ids:
        topics.append(_topic(v, topic.topic_id, [{"partition_index": p.partition_index, "leader_id": -1,
                                                  "leader_epoch": -1, "partition_epoch": -1,
                                                  "error_code": ErrorCode.unknown_topic_id} for p in topic.partitions]))
    return build(response_schema(_KEY, v), {"throttle_time": 0, "error_code": 0, "topics": topics})


def _topic(version: int, name_or_id, partitions: list[dict]) -> dict:
    key = "topic_name" if version < 2 else "topic_id"
    return {key: name_or_id if name_or_id is not None else ZERO_UUID, "partitions": partitions}


def _top_level(version: int, error: ErrorCode):
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": error, "topics": []})


def error_response(request, code):
    """AlterPartitionRequest.getErrorResponse (dispatch's NOT_CONTROLLER): top-level error, no topics."""
    return _top_level(request.version, code)
