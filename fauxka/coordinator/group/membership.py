"""SyncGroup, Heartbeat and LeaveGroup on top of the rebalances (Kafka 3.x GroupCoordinator)."""

import asyncio

from fauxka.model.errors import ErrorCode

from .rebalance import RebalanceCore, SyncResult, now_ms
from .state import Group, GroupState


class GroupMembership(RebalanceCore):
    # --- SyncGroup ----------------------------------------------------------------------------------
    async def sync(self, group_id: str, generation: int, member_id: str, instance_id: str | None,
                   protocol_type: str | None, protocol: str | None,
                   assignments: dict[str, bytes]) -> SyncResult:
        group = self.groups.get(group_id)
        if not group_id:
            return SyncResult(ErrorCode.invalid_group_id)
        if group is None:
            return SyncResult(ErrorCode.unknown_member_id)
        error = self._check_member(group, member_id, instance_id)
        if error is not None:
            return SyncResult(error)
        if generation != group.generation:
            return SyncResult(ErrorCode.illegal_generation)
        if (protocol_type is not None and protocol_type != group.protocol_type) or \
                (protocol is not None and protocol != group.protocol):
            return SyncResult(ErrorCode.inconsistent_group_protocol)
        member = group.members[member_id]
        if group.is_(GroupState.PREPARING_REBALANCE):
            return SyncResult(ErrorCode.rebalance_in_progress)
        if group.is_(GroupState.STABLE):
            group.pending_sync.discard(member_id)
            self._schedule_heartbeat(group, member)
            return SyncResult(ErrorCode.none, member.assignment, group.protocol_type, group.protocol)
        if not group.is_(GroupState.COMPLETING_REBALANCE):
            return SyncResult(ErrorCode.unknown_member_id)
        self._complete_sync(member, SyncResult(ErrorCode.rebalance_in_progress))  # a duplicate sync
        member.sync_future = asyncio.get_running_loop().create_future()
        future = member.sync_future
        group.pending_sync.discard(member_id)
        self._schedule_heartbeat(group, member)
        if group.is_leader(member_id):
            self._spawn(self._leader_sync(group, group.generation, dict(assignments)))
        return await future

    async def _leader_sync(self, group: Group, generation: int, assignments: dict[str, bytes]) -> None:
        """Persist the leader's assignment (GroupMetadataValue), then hand every member its part."""
        previous = {m.member_id: m.assignment for m in group.members.values()}
        for m in group.members.values():
            m.assignment = assignments.get(m.member_id, b"")
        error = await self._store_group(group)
        if not group.is_(GroupState.COMPLETING_REBALANCE) or group.generation != generation:
            return  # a rebalance started meanwhile; its own answers were given
        if error != ErrorCode.none:
            for m in group.members.values():
                m.assignment = previous.get(m.member_id, b"")
                self._complete_sync(m, SyncResult(error))
            self._prepare_rebalance(group)
            return
        for m in group.members.values():
            self._complete_sync(m, SyncResult(ErrorCode.none, m.assignment, group.protocol_type, group.protocol))
        group.transition(GroupState.STABLE, now_ms())

    # --- Heartbeat ----------------------------------------------------------------------------------
    def heartbeat(self, group_id: str, member_id: str, instance_id: str | None, generation: int) -> ErrorCode:
        group = self.groups.get(group_id)
        if not group_id:
            return ErrorCode.invalid_group_id
        if group is None:
            return ErrorCode.unknown_member_id
        error = self._check_member(group, member_id, instance_id)
        if error is not None:
            return error
        if generation != group.generation:
            return ErrorCode.illegal_generation
        member = group.members[member_id]
        if group.is_(GroupState.EMPTY):
            return ErrorCode.unknown_member_id
        self._schedule_heartbeat(group, member)
        if group.is_(GroupState.PREPARING_REBALANCE):
            return ErrorCode.rebalance_in_progress
        return ErrorCode.none

    # --- LeaveGroup ---------------------------------------------------------------------------------
    def leave(self, group_id: str, members: list[tuple[str, str | None]]) -> tuple[ErrorCode, list[ErrorCode]]:
        """(top-level error, one error per member) as LeaveGroup v3+ answers a batch."""
        group = self.groups.get(group_id)
        if not group_id:
            return ErrorCode.invalid_group_id, []
        if group is None or group.is_(GroupState.DEAD):
            return ErrorCode.unknown_member_id, []
        errors = []
        for member_id, instance_id in members:
            if instance_id is not None:
                known = group.static_members.get(instance_id)
                if known is None:
                    errors.append(ErrorCode.unknown_member_id)
                    continue
                if member_id and member_id != known:
                    errors.append(ErrorCode.fenced_instance_id)
                    continue
                member_id = known
            if member_id in group.pending_members:
                group.pending_members.discard(member_id)
                self._cancel(("pending", group_id, member_id))
                self._try_complete_join(group)
                errors.append(ErrorCode.none)
                continue
            member = group.members.get(member_id)
            if member is None:
                errors.append(ErrorCode.unknown_member_id)
                continue
            self._remove_member(group, member)
            errors.append(ErrorCode.none)
        return ErrorCode.none, errors
