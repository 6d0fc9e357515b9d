"""What the group apis share: the coordinator check every group request passes first
(GroupCoordinator.validateGroupStatus: INVALID_GROUP_ID, NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS) and the group's ACL check (GROUP_AUTHORIZATION_FAILED)."""

from fauxka.model.errors import ErrorCode

from ..context import RequestContext


def group_id_key(request) -> str | None:
    """coordinator_key for apis with one group_id: fauxka/broker/dispatch.py answers NOT_COORDINATOR."""
    return request.body.group_id


def group_error(ctx: RequestContext, group_id: str, operation: str = "READ", *,
                coordinator: bool = True) -> ErrorCode | None:
    """The error a request for `group_id` gets before the coordinator looks at it, or None.
    `coordinator` False: the ACL check alone (OffsetCommit v0 goes to ZooKeeper, on any broker)."""
    if not ctx.authorized(operation, "GROUP", group_id):
        return ErrorCode.group_authorization_failed
    return coordinator_error(ctx, group_id) if coordinator else None


def coordinator_error(ctx: RequestContext, group_id: str) -> ErrorCode | None:
    if not group_id:
        return ErrorCode.invalid_group_id
    code = ctx.groups.status(group_id)
    return None if code == ErrorCode.none else code


def offsets_to_commit(ctx: RequestContext, topics, to_request) -> tuple[dict, dict]:
    """OffsetCommit's and TxnOffsetCommit's partition checks: READ on each Topic
    (TOPIC_AUTHORIZATION_FAILED), a known partition (UNKNOWN_TOPIC_OR_PARTITION). Returns
    (errors, {partition: to_request(p)} for the rest)."""
    results: dict[tuple[str, int], ErrorCode] = {}
    wanted: dict = {}
    for topic in topics:
        authorized = ctx.authorized("READ", "TOPIC", topic.name)
        known = ctx.cache.partitions_of(topic.name)
        for p in topic.partitions:
            tp = (topic.name, p.partition_index)
            if not authorized:
                results[tp] = ErrorCode.topic_authorization_failed
            elif p.partition_index not in known:
                results[tp] = ErrorCode.unknown_topic_or_partition
            else:
                wanted[tp] = to_request(p)
    return results, wanted
