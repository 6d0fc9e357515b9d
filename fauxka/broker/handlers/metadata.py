"""Metadata v0-v12: brokers, controller, cluster id and topics from the metadata cache."""

import uuid
from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode
from fauxka.model.topic_names import validate_topic_name

from ..context import RequestContext
from ..protocol.build import build, entity_class
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .cluster_answers import AUTHORIZED_OPERATIONS_OMITTED, cluster_operations, listener_brokers

if TYPE_CHECKING:
    from ..protocol.requests import MetadataRequest


_KEY = 3
ZERO_UUID = uuid.UUID(int=0)
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})



async def handle(ctx: RequestContext, request: "MetadataRequest") -> Response:
    version = ctx.version
    cache = ctx.cache
    topics: list[dict] = []
    by_id: dict[str, uuid.UUID] = {}  # names asked for by topic id
    all_topics = request.topics is None or (version == 0 and not request.topics)
    if all_topics:
        names = sorted(cache.topics)
    else:
        names = []
        for wanted in request.topics:
            topic_id = getattr(wanted, "topic_id", None) or ZERO_UUID
            if wanted.name is None and version < 12:
                topics.append(_topic_error(ErrorCode.invalid_request, None, ZERO_UUID))
            elif topic_id != ZERO_UUID:
                name = cache.topic_by_id(topic_id)
                if name is None:
                    topics.append(_topic_error(ErrorCode.unknown_topic_id, None, topic_id))
                else:
                    names.append(name)
                    by_id[name] = topic_id
            else:
                names.append(wanted.name)
    include_ops = getattr(request, "include_topic_authorized_operations", False)
    unique_names = list(dict.fromkeys(names))  # Kafka answers each topic once
    # Describe on each topic: the others are left out of an all-topics answer, refused when named
    described = [n for n in unique_names if ctx.authorized("DESCRIBE", "TOPIC", n, log_if_denied=not all_topics)]
    visible = set(described)
    hidden = [n for n in unique_names if n not in visible]
    missing = [n for n in described if n not in cache.topics]
    uncreatable = _create_refused(ctx, request, missing)
    missing_errors = await _missing_topic_errors(ctx, request, [n for n in missing if n not in uncreatable])
    for name in described:  # the cache as it is now: auto-creation waited on the controller
        if name in uncreatable:
            continue
        if name in missing_errors or name not in cache.topics:  # missing, or deleted meanwhile
            code = missing_errors.get(name, ErrorCode.unknown_topic_or_partition)
            topics.append(_topic_error(code, name, ZERO_UUID, _topic_ops(ctx, name, include_ops)))
        else:
            topics.append(_served_topic(ctx, name, include_ops))
    topics += [_topic_error(ErrorCode.topic_authorization_failed, n, ZERO_UUID, is_internal=n in INTERNAL_TOPICS)
               for n in uncreatable]
    if not all_topics:  # topic ids are no secret, names are
        topics += [_topic_error(ErrorCode.topic_authorization_failed, None if n in by_id else n, by_id.get(n, ZERO_UUID))
                   for n in hidden]
    include_cluster_ops = getattr(request, "include_cluster_authorized_operations", False)
    return build(response_schema(_KEY, version), {
        "throttle_time": 0,
        "brokers": listener_brokers(ctx),
        "cluster_id": cache.cluster_id,
        "controller_id": ctx.advertised_controller_id(),
        "topics": topics,
        "cluster_authorized_operations": cluster_operations(ctx, include_cluster_ops),
    })


def _topic_ops(ctx: RequestContext, name: str, include: bool) -> int:
    return ctx.authorized_operations("TOPIC", name) if include else AUTHORIZED_OPERATIONS_OMITTED


def _create_refused(ctx: RequestContext, request, missing: list[str]) -> set[str]:
    """Missing topics auto-creation would create but the client may not: Create on the Cluster,
    else on the topic (KafkaApis.handleTopicMetadataRequest)."""
    allowed = ctx.config["auto.create.topics.enable"] and getattr(request, "allow_auto_topic_creation", True)
    if not (allowed and missing) or ctx.authorized("CREATE", "CLUSTER", CLUSTER_NAME, log_if_denied=False):
        return set()
    return {n for n in missing if not ctx.authorized("CREATE", "TOPIC", n)}


async def _missing_topic_errors(ctx: RequestContext, request, missing: list[str]) -> dict[str, int]:
    """INVALID_TOPIC_EXCEPTION for illegal names; the others are auto-created when allowed, each
    answered what its creation gave (KafkaApis.getTopicMetadata, fauxka/broker/auto_create.py)."""
    errors = {n: ErrorCode.invalid_topic_exception if validate_topic_name(n) else ErrorCode.unknown_topic_or_partition for n in missing}
    allowed = ctx.config["auto.create.topics.enable"] and getattr(request, "allow_auto_topic_creation", True)
    creatable = [n for n in missing if errors[n] == ErrorCode.unknown_topic_or_partition]
    if allowed and creatable:
        errors.update(await ctx.auto_create.create(creatable, ctx))
    return errors


def _topic_error(error: int, name: str | None, topic_id: uuid.UUID, ops: int = AUTHORIZED_OPERATIONS_OMITTED,
                 is_internal: bool = False) -> dict:
    return {"error_code": error, "name": name, "topic_id": topic_id, "is_internal": is_internal, "partitions": (),
            "topic_authorized_operations": ops}


_MEMO_LIMIT = 10000  # entries (topic, version, listener) kept; past it the memo starts again


def _served_topic(ctx: RequestContext, name: str, include_ops: bool):
    """The topic's answer, built once per change of the cache (its state, brokers, deletions) and
    kept while nothing it depends on changes: a Metadata for every topic of a large cluster built
    thousands of partition entries per request. Not kept with authorized operations (they depend
    on the principal) or while faults are injected (offline replicas come from them)."""
    faults = ctx.faults
    if include_ops or (faults is not None and faults.active):
        return _topic(ctx, name, include_ops)
    served = ctx.cache.served
    memo = served.memo
    key = (name, ctx.version, ctx.listener)
    generation = served.of(name)
    held = memo.get(key)
    if held is not None and held[0] == generation:
        return held[1]
    entity = build(entity_class(response_schema(_KEY, ctx.version), "topics"), _topic(ctx, name, include_ops))
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = (generation, entity)
    return entity


def _topic(ctx: RequestContext, name: str, include_ops: bool) -> dict:
    cache = ctx.cache
    assignment = cache.topics[name]
    faults = ctx.faults  # a replica on a failed log (a storage fault) is offline
    failed = faults.offline if faults is not None else (lambda broker_id, topic, partition: False)
    partitions = []
    for index, replicas in sorted(assignment.partitions.items()):
        state = cache.partition_states.get((name, index))
        leader = state.leader if state else -1
        leader_reg = cache.brokers.get(leader)
        if leader_reg is None:
            error, leader_id = ErrorCode.leader_not_available, -1
        elif leader_reg.endpoint(ctx.listener) is None:
            error, leader_id = (ErrorCode.listener_not_found if ctx.version >= 6 else ErrorCode.leader_not_available), -1
        else:
            error, leader_id = ErrorCode.none, leader
        partitions.append({
            "error_code": error,
            "partition_index": index,
            "leader_id": leader_id,
            "leader_epoch": state.leader_epoch if state else -1,
            "replica_nodes": replicas,
            "isr_nodes": state.isr if state else [],
            "offline_replicas": [r for r in replicas if r not in cache.brokers or failed(r, name, index)],
        })
    return {
        "error_code": ErrorCode.none,
        "name": name,
        "topic_id": assignment.topic_id or ZERO_UUID,
        "is_internal": name in INTERNAL_TOPICS,
        "partitions": partitions,
        "topic_authorized_operations": _topic_ops(ctx, name, include_ops),
    }


def error_response(request, code):
    """MetadataRequest.getErrorResponse: Metadata has no top-level error; each topic named answers it
    (no partitions), with no brokers and no controller (-1)."""
    topics = request.body.topics or ()
    return build(response_schema(_KEY, request.version), {
        "throttle_time": 0, "brokers": [], "cluster_id": None, "controller_id": -1,
        "topics": [_topic_error(code, t.name or "", getattr(t, "topic_id", None) or ZERO_UUID) for t in topics],
        "cluster_authorized_operations": AUTHORIZED_OPERATIONS_OMITTED})
