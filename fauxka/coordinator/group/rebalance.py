"""The classic group protocol's rebalances: JoinGroup and the timers (Kafka 3.x GroupCoordinator).

Socket-free: requests come in as plain values, answers go out as plain values, persistence is the
coordinator runtime handed in (fauxka/coordinator/runtime.py: records appended with acks=all to the
group's __consumer_offsets partition),
timers are the event loop's `call_later`, owned here and cancelled by `close()`:
- a member's session (`session.timeout.ms`, reset by heartbeats, joins, syncs, commits);
- the join phase (`rebalance.timeout.ms`, the largest of the members'; the first rebalance of an
  empty group waits `group.initial.rebalance.delay.ms`, extended while members keep arriving,
  up to the rebalance timeout: Kafka's InitialDelayedJoin);
- KIP-394 pending members (`MEMBER_ID_REQUIRED` handed out, not joined yet), bounded by the session timeout;
- the sync phase: members that do not SyncGroup within the rebalance timeout are removed.
"""

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

from fauxka.model.errors import ErrorCode

from ..runtime import CoordinatorRuntime
from .config import GroupConfig
from .records import GroupKey, encode_group_value, encode_key
from .state import Group, GroupState, Member


@dataclass(slots=True)
class JoinResult:
    error: ErrorCode
    member_id: str = ""
    generation: int = -1
    protocol_type: str | None = None
    protocol: str | None = None
    leader: str = ""
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)
    skip_assignment: bool = False


@dataclass(slots=True)
class SyncResult:
    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol: str | None = None


def now_ms() -> int:
    return int(time.time() * 1000)


def store_error(code: ErrorCode) -> ErrorCode:
    """GroupMetadataManager.storeGroup / storeOffsets: a failed append as the client sees it."""
    if code in (ErrorCode.unknown_topic_or_partition, ErrorCode.not_enough_replicas,
                ErrorCode.not_enough_replicas_after_append, ErrorCode.request_timed_out):
        return ErrorCode.coordinator_not_available
    if code in (ErrorCode.not_leader_or_follower, ErrorCode.kafka_storage_error):
        return ErrorCode.not_coordinator
    if code in (ErrorCode.message_too_large, ErrorCode.record_list_too_large, ErrorCode.invalid_fetch_size):
        return ErrorCode.unknown_server_error
    return code


class RebalanceCore:
    def __init__(self, config: GroupConfig, runtime: CoordinatorRuntime, *, metrics=None):
        self.config = config
        self.runtime = runtime  # the group records' appends; a list in unit tests
        self.groups: dict[str, Group] = {}
        self.metrics = metrics  # optional: .rebalance(group_id), .commits(n)
        self._timers: dict[tuple, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task] = set()
        self._join_extra: dict[str, int] = {}  # InitialDelayedJoin: ms left to extend by
        self._closed = False

    # --- life cycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        self._closed = True
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for task in list(self._tasks):
            task.cancel()

    def unload(self, keep: Callable[[str], bool]) -> None:
        """Forget the groups `keep` rejects (their partition moved): waiting members get NOT_COORDINATOR."""
        for group_id in [g for g in self.groups if not keep(g)]:
            group = self.groups.pop(group_id)
            for member in group.members.values():
                self._complete_join(member, JoinResult(ErrorCode.not_coordinator, member.member_id))
                self._complete_sync(member, SyncResult(ErrorCode.not_coordinator))
            for key in [k for k in self._timers if k[1] == group_id]:
                self._timers.pop(key).cancel()
            self._join_extra.pop(group_id, None)

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _timer(self, key: tuple, delay_ms: float, callback: Callable[[], None]) -> None:
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        if self._closed:
            return

        def fire():
            self._timers.pop(key, None)
            callback()
        self._timers[key] = asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, fire)

    def _cancel(self, key: tuple) -> None:
        handle = self._timers.pop(key, None)
        if handle is not None:
            handle.cancel()

    # --- JoinGroup ----------------------------------------------------------------------------------
    async def join(self, group_id: str, member_id: str, instance_id: str | None, client_id: str, client_host: str,
                   session_timeout_ms: int, rebalance_timeout_ms: int, protocol_type: str,
                   protocols: list[tuple[str, bytes]], require_known_member_id: bool,
                   supports_skip_assignment: bool = True) -> JoinResult:
        if not group_id:
            return JoinResult(ErrorCode.invalid_group_id, member_id)
        if not self.config.min_session_timeout_ms <= session_timeout_ms <= self.config.max_session_timeout_ms:
            return JoinResult(ErrorCode.invalid_session_timeout, member_id)
        if rebalance_timeout_ms < 0:
            rebalance_timeout_ms = session_timeout_ms  # JoinGroup v0 has none: Kafka uses the session timeout
        group = self.groups.get(group_id)
        unknown = member_id == ""
        if group is None:
            if not unknown:
                return JoinResult(ErrorCode.unknown_member_id, member_id)
            group = self.groups[group_id] = Group(group_id, current_state_timestamp=now_ms())
        new_member = unknown or member_id in group.pending_members
        if new_member and len(group.members) >= self.config.max_size:
            return JoinResult(ErrorCode.group_max_size_reached, member_id)
        names = [name for name, _ in protocols]
        loop = asyncio.get_running_loop()
        if unknown:
            if group.is_(GroupState.DEAD):
                return JoinResult(ErrorCode.coordinator_not_available, member_id)
            if not group.supports_protocols(protocol_type, names):
                return JoinResult(ErrorCode.inconsistent_group_protocol, member_id)
            new_id = f"{instance_id if instance_id is not None else client_id}-{uuid.uuid4()}"
            if instance_id is not None and instance_id in group.static_members:
                return await self._replace_static(group, instance_id, new_id, session_timeout_ms,
                                                  rebalance_timeout_ms, protocols, supports_skip_assignment)
            if instance_id is None and require_known_member_id:
                group.pending_members.add(new_id)
                self._timer(("pending", group_id, new_id), session_timeout_ms,
                            lambda: self._expire_pending(group, new_id))
                return JoinResult(ErrorCode.member_id_required, new_id)
            member_id = new_id
        elif member_id in group.pending_members:
            if not group.supports_protocols(protocol_type, names):
                return JoinResult(ErrorCode.inconsistent_group_protocol, member_id)
            self._cancel(("pending", group_id, member_id))
        else:
            error = self._check_member(group, member_id, instance_id)
            if error is not None:
                return JoinResult(error, member_id)
            if not group.supports_protocols(protocol_type, names):
                return JoinResult(ErrorCode.inconsistent_group_protocol, member_id)
            return await self._known_join(group, group.members[member_id], protocols, session_timeout_ms,
                                          rebalance_timeout_ms)
        member = Member(member_id, instance_id, client_id, client_host, rebalance_timeout_ms, session_timeout_ms,
                        protocol_type, list(protocols), is_new=True, join_future=loop.create_future())
        future = member.join_future  # the join may complete before we await it (set to None then)
        if group.is_(GroupState.PREPARING_REBALANCE) and group.generation == 0:
            group.new_member_added = True  # the initial delay may be extended (first generation only)
        group.add(member)
        self._schedule_heartbeat(group, member)
        self._maybe_prepare_rebalance(group)
        self._try_complete_join(group)
        return await future

    def _check_member(self, group: Group, member_id: str, instance_id: str | None) -> ErrorCode | None:
        """Kafka's validateCurrentMember: static fencing first, then the member id."""
        if instance_id is not None:
            known = group.static_members.get(instance_id)
            if known is not None and known != member_id:
                return ErrorCode.fenced_instance_id
        if group.is_(GroupState.DEAD) or member_id not in group.members:
            return ErrorCode.unknown_member_id
        return None

    async def _known_join(self, group: Group, member: Member, protocols, session_timeout_ms: int,
                          rebalance_timeout_ms: int) -> JoinResult:
        if group.is_(GroupState.PREPARING_REBALANCE):
            return await self._update_and_rebalance(group, member, protocols, session_timeout_ms, rebalance_timeout_ms)
        if group.is_(GroupState.COMPLETING_REBALANCE):
            if member.matches(protocols):  # a retried join: the same generation again
                self._schedule_heartbeat(group, member)
                return self._join_answer(group, member)
            return await self._update_and_rebalance(group, member, protocols, session_timeout_ms, rebalance_timeout_ms)
        if group.is_(GroupState.STABLE):
            if group.is_leader(member.member_id) or not member.matches(protocols):
                return await self._update_and_rebalance(group, member, protocols, session_timeout_ms,
                                                        rebalance_timeout_ms)
            self._schedule_heartbeat(group, member)
            return self._join_answer(group, member, with_members=False)
        return JoinResult(ErrorCode.unknown_member_id, member.member_id)

    async def _update_and_rebalance(self, group: Group, member: Member, protocols, session_timeout_ms: int,
                                    rebalance_timeout_ms: int) -> JoinResult:
        member.protocols = list(protocols)
        member.session_timeout_ms = session_timeout_ms
        member.rebalance_timeout_ms = rebalance_timeout_ms
        if member.join_future is not None and not member.join_future.done():
            member.join_future.set_result(JoinResult(ErrorCode.unknown_member_id, member.member_id))
        member.join_future = asyncio.get_running_loop().create_future()
        future = member.join_future
        self._maybe_prepare_rebalance(group)
        self._try_complete_join(group)
        return await future

    async def _replace_static(self, group: Group, instance_id: str, new_id: str, session_timeout_ms: int,
                              rebalance_timeout_ms: int, protocols, supports_skip_assignment: bool) -> JoinResult:
        """KIP-345: a static member back with an unknown member id replaces its old self; the old
        one, if still waiting, is fenced. In Stable with the protocol unchanged, no rebalance: a
        JoinGroup v9+ leader is told to skip the assignment (KIP-814); before v9 the old leader id is
        answered, so the member does not assign (updateStaticMemberAndRebalance)."""
        current_leader = group.leader_id or ""
        old_id = group.static_members[instance_id]
        old = group.members[old_id]
        self._complete_join(old, JoinResult(ErrorCode.fenced_instance_id, old_id))
        self._complete_sync(old, SyncResult(ErrorCode.fenced_instance_id))
        self._cancel(("hb", group.group_id, old_id))
        old_protocols = old.protocols
        member = group.replace_static(instance_id, new_id)
        member.protocols = list(protocols)
        member.session_timeout_ms = session_timeout_ms
        member.rebalance_timeout_ms = rebalance_timeout_ms
        self._schedule_heartbeat(group, member)
        if group.is_(GroupState.STABLE) and group.protocol == group.select_protocol():
            error = await self._store_group(group)
            if error != ErrorCode.none:  # put the old member back, as Kafka reverts
                group.replace_static(instance_id, old_id)
                member.protocols = old_protocols
                return JoinResult(error, "")
            if not supports_skip_assignment:
                return JoinResult(ErrorCode.none, new_id, group.generation, group.protocol_type, group.protocol,
                                  current_leader)
            leader = group.is_leader(new_id)
            return self._join_answer(group, member, with_members=leader, skip_assignment=leader)
        member.join_future = asyncio.get_running_loop().create_future()
        future = member.join_future
        if group.is_(GroupState.COMPLETING_REBALANCE) or group.is_(GroupState.STABLE):
            self._prepare_rebalance(group)
        self._try_complete_join(group)
        return await future

    def _join_answer(self, group: Group, member: Member, *, with_members: bool | None = None,
                     skip_assignment: bool = False) -> JoinResult:
        leader = group.is_leader(member.member_id) if with_members is None else with_members
        members = ([(m.member_id, m.group_instance_id, m.metadata(group.protocol or ""))
                    for m in group.members.values()] if leader else [])
        return JoinResult(ErrorCode.none, member.member_id, group.generation, group.protocol_type, group.protocol,
                          group.leader_id or "", members, skip_assignment)

    def _expire_pending(self, group: Group, member_id: str) -> None:
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            self._try_complete_join(group)

    # --- rebalances ---------------------------------------------------------------------------------
    def _maybe_prepare_rebalance(self, group: Group) -> None:
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY):
            self._prepare_rebalance(group)

    def _prepare_rebalance(self, group: Group) -> None:
        if group.is_(GroupState.COMPLETING_REBALANCE):  # resetAndPropagateAssignmentError
            for m in group.members.values():
                m.assignment = b""
                self._complete_sync(m, SyncResult(ErrorCode.rebalance_in_progress))
        self._cancel(("sync", group.group_id))
        group.pending_sync.clear()
        rebalance_ms = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
        if group.is_(GroupState.EMPTY):
            delay = self.config.initial_rebalance_delay_ms
            self._join_extra[group.group_id] = max(rebalance_ms - delay, 0)
            group.new_member_added = False
            self._timer(("join", group.group_id), delay, lambda: self._initial_join_expired(group, delay))
        else:
            self._join_extra.pop(group.group_id, None)
            self._timer(("join", group.group_id), rebalance_ms, lambda: self._complete_join_phase(group))
        group.transition(GroupState.PREPARING_REBALANCE, now_ms())
        if self.metrics is not None:
            self.metrics.rebalance(group.group_id)

    def _initial_join_expired(self, group: Group, delay: int) -> None:
        remaining = self._join_extra.get(group.group_id, 0)
        if group.new_member_added and remaining > 0:
            group.new_member_added = False
            step = min(delay, remaining)
            self._join_extra[group.group_id] = remaining - step
            self._timer(("join", group.group_id), step, lambda: self._initial_join_expired(group, delay))
            return
        self._join_extra.pop(group.group_id, None)
        self._complete_join_phase(group)

    def _try_complete_join(self, group: Group) -> None:
        """DelayedJoin.tryComplete: done once every member has rejoined and no KIP-394 id is pending;
        the initial delay always runs its course."""
        if (group.is_(GroupState.PREPARING_REBALANCE) and group.group_id not in self._join_extra
                and group.has_all_members_joined()):
            self._cancel(("join", group.group_id))
            self._complete_join_phase(group)

    def _complete_join_phase(self, group: Group) -> None:
        """GroupCoordinator.onCompleteJoin: drop who did not rejoin, start the next generation."""
        if not group.is_(GroupState.PREPARING_REBALANCE) or self.groups.get(group.group_id) is not group:
            return
        for member in [m for m in group.members.values() if m.join_future is None]:
            self._remove_member(group, member, update=False)
        group.generation += 1
        if group.members:
            group.protocol = group.select_protocol()
            group.transition(GroupState.COMPLETING_REBALANCE, now_ms())
        else:
            group.protocol = None
            group.transition(GroupState.EMPTY, now_ms())
            self._spawn(self._store_group(group))
            return
        group.pending_sync = set(group.members)
        for member in group.members.values():
            self._complete_join(member, self._join_answer(group, member))
            member.is_new = False
            self._schedule_heartbeat(group, member)
        rebalance_ms = max(m.rebalance_timeout_ms for m in group.members.values())
        generation = group.generation
        self._timer(("sync", group.group_id), rebalance_ms, lambda: self._sync_expired(group, generation))

    def _sync_expired(self, group: Group, generation: int) -> None:
        """Kafka's pending-sync timeout: members that never synced this generation are removed."""
        if group.generation != generation or not group.pending_sync:
            return
        if group.state not in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE):
            return
        for member_id in list(group.pending_sync):
            member = group.members.get(member_id)
            if member is not None:
                self._remove_member(group, member, update=False)
        group.pending_sync.clear()
        self._after_removal(group)

    def _complete_join(self, member: Member, result: JoinResult) -> None:
        if member.join_future is not None:
            if not member.join_future.done():
                member.join_future.set_result(result)
            member.join_future = None

    def _complete_sync(self, member: Member, result: SyncResult) -> None:
        if member.sync_future is not None:
            if not member.sync_future.done():
                member.sync_future.set_result(result)
            member.sync_future = None

    # --- sessions -----------------------------------------------------------------------------------
    def _schedule_heartbeat(self, group: Group, member: Member) -> None:
        member.heartbeat_deadline = time.monotonic() + member.session_timeout_ms / 1000
        self._timer(("hb", group.group_id, member.member_id), member.session_timeout_ms,
                    lambda: self._session_expired(group, member.member_id))

    def _session_expired(self, group: Group, member_id: str) -> None:
        member = group.members.get(member_id)
        if member is None or self.groups.get(group.group_id) is not group:
            return
        if member.join_future is not None or member.sync_future is not None:  # hasSatisfiedHeartbeat
            self._schedule_heartbeat(group, member)
            return
        self._remove_member(group, member)

    def _remove_member(self, group: Group, member: Member, *, update: bool = True) -> None:
        """removeMemberAndUpdateGroup: the member's waits end with UNKNOWN_MEMBER_ID."""
        self._complete_join(member, JoinResult(ErrorCode.unknown_member_id, member.member_id))
        self._complete_sync(member, SyncResult(ErrorCode.unknown_member_id))
        self._cancel(("hb", group.group_id, member.member_id))
        group.remove(member.member_id)
        if update:
            self._after_removal(group)

    def _after_removal(self, group: Group) -> None:
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._prepare_rebalance(group)
        elif group.is_(GroupState.PREPARING_REBALANCE):
            self._try_complete_join(group)

    async def _store_group(self, group: Group) -> ErrorCode:
        value = encode_group_value(group.to_record(now_ms()))
        code = await self.runtime.write_records(group.group_id, [(encode_key(GroupKey(group.group_id)), value)])
        return store_error(code)
