"""Who may commit offsets to a group: GroupCoordinator.validateOffsetCommit (Kafka 3.9), shared by
OffsetCommit and TxnOffsetCommit.

In order: a Dead group (unloaded) -> COORDINATOR_NOT_AVAILABLE; a simple consumer or the admin
client (generation < 0) committing to an Empty group -> allowed; a request naming a member, a
generation or a static instance -> validateCurrentMember (the instance must map to that member:
FENCED_INSTANCE_ID if it maps to another, UNKNOWN_MEMBER_ID if to none; the member must be in the
group) then the generation must be the group's (ILLEGAL_GENERATION); anything else committing to
a non-empty group -> UNKNOWN_MEMBER_ID, except a transactional commit (TxnOffsetCommit before v3
carries no member or generation).
"""

from fauxka.model.errors import ErrorCode

from .state import Group, GroupState


def offset_commit_error(group: Group, member_id: str, instance_id: str | None, generation: int,
                        transactional: bool) -> ErrorCode | None:
    if group.is_(GroupState.DEAD):
        return ErrorCode.coordinator_not_available
    if generation < 0 and group.is_(GroupState.EMPTY):
        return None
    if generation >= 0 or member_id or instance_id is not None:
        if instance_id is not None:
            current = group.static_members.get(instance_id)
            if current is None:
                return ErrorCode.unknown_member_id
            if current != member_id:
                return ErrorCode.fenced_instance_id
        if member_id not in group.members:
            return ErrorCode.unknown_member_id
        return ErrorCode.illegal_generation if generation != group.generation else None
    if not transactional and not group.is_(GroupState.EMPTY):
        return ErrorCode.unknown_member_id
    return None
