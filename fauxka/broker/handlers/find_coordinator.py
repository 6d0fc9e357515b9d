"""FindCoordinator v0-v4: the broker leading the group's __consumer_offsets partition, or the
transactional id's __transaction_state partition (key_type 1).

v0 key only (a group); v1 adds key_type (0 group, 1 transaction), throttle time and error message;
v3 flexible; v4 (KIP-699) batches keys and answers a list of coordinators. The first request for a
group creates __consumer_offsets (offsets.topic.num.partitions, replication factor capped by the
live brokers, compacted) and answers COORDINATOR_NOT_AVAILABLE until its partition has a leader,
as Kafka's KafkaApis.getCoordinator does; the first for a transactional id creates
__transaction_state (transaction.state.log.*) the same way. Authorization: DESCRIBE on the Group
(GROUP_AUTHORIZATION_FAILED) or on the TransactionalId (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
"""

from typing import TYPE_CHECKING

from fauxka.coordinator.partitioner import partition_for
from fauxka.model.errors import ErrorCode
from fauxka.model.topic_names import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .cluster_answers import listener_brokers

if TYPE_CHECKING:
    from ..protocol.requests import FindCoordinatorRequest

_KEY = 10
GROUP, TRANSACTION = 0, 1
_MESSAGES = {ErrorCode.coordinator_not_available: "The coordinator is not available.",
             ErrorCode.group_authorization_failed: "Group authorization failed.",
             ErrorCode.transactional_id_authorization_failed: "Transactional Id authorization failed.",
             ErrorCode.invalid_request: "Invalid request."}


def _find(ctx: RequestContext, key: str, key_type: int) -> dict:
    none = {"key": key, "node_id": -1, "host": "", "port": -1}
    if key_type == GROUP:
        if not ctx.authorized("DESCRIBE", "GROUP", key):
            return {**none, "error_code": ErrorCode.group_authorization_failed}
    elif key_type == TRANSACTION:
        if not ctx.authorized("DESCRIBE", "TRANSACTIONAL_ID", key):
            return {**none, "error_code": ErrorCode.transactional_id_authorization_failed}
    else:
        return {**none, "error_code": ErrorCode.invalid_request}
    if not key:
        return {**none, "error_code": ErrorCode.invalid_request}
    cache = ctx.cache
    topic = GROUP_METADATA_TOPIC if key_type == GROUP else TRANSACTION_STATE_TOPIC
    assignment = cache.topics.get(topic)
    if assignment is None or not assignment.partitions:
        ctx.auto_create.request([topic], ctx)  # with the internal topic's own spec (fauxka/broker/auto_create.py)
        return {**none, "error_code": ErrorCode.coordinator_not_available}
    partition = partition_for(key, len(assignment.partitions))
    state = cache.partition_states.get((topic, partition))
    leader = state.leader if state is not None else -1
    for broker in listener_brokers(ctx):
        if broker["node_id"] == leader:
            return {"key": key, "node_id": leader, "host": broker["host"], "port": broker["port"],
                    "error_code": ErrorCode.none}
    return {**none, "error_code": ErrorCode.coordinator_not_available}


def _with_message(found: dict) -> dict:
    code = found["error_code"]
    return {**found, "error_message": None if code == ErrorCode.none else _MESSAGES.get(code, code.name)}


async def handle(ctx: RequestContext, request: "FindCoordinatorRequest") -> Response:
    version = ctx.version
    if version >= 4:
        return build(response_schema(_KEY, version), {
            "throttle_time": 0,
            "coordinators": [_with_message(_find(ctx, k, request.key_type)) for k in request.coordinator_keys]})
    found = _with_message(_find(ctx, request.key, request.key_type if version >= 1 else GROUP))
    return build(response_schema(_KEY, version), {"throttle_time": 0, **found})


def error_response(request, code):
    version = request.version
    empty = {"node_id": -1, "host": "", "port": -1, "error_code": code, "error_message": None}
    if version >= 4:
        return build(response_schema(_KEY, version), {
            "throttle_time": 0, "coordinators": [{"key": k, **empty} for k in request.body.coordinator_keys]})
    return build(response_schema(_KEY, version), {"throttle_time": 0, **empty})
