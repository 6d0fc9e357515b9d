"""A group's state as Kafka's GroupMetadata / MemberMetadata keep it.

States and their allowed predecessors (GroupMetadata.scala's validPreviousStates):
Empty <- PreparingRebalance; PreparingRebalance <- Stable, CompletingRebalance, Empty;
CompletingRebalance <- PreparingRebalance; Stable <- CompletingRebalance;
Dead <- every state. Plain data, no I/O, no clock: callers pass `now_ms`.
"""

import asyncio
import enum
from collections import Counter
from dataclasses import dataclass, field

from .records import GroupValue, MemberValue, OffsetValue
from .subscriptions import topics_of


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_VALID_PREVIOUS = {
    GroupState.EMPTY: {GroupState.PREPARING_REBALANCE},
    GroupState.PREPARING_REBALANCE: {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY},
    GroupState.COMPLETING_REBALANCE: {GroupState.PREPARING_REBALANCE},
    GroupState.STABLE: {GroupState.COMPLETING_REBALANCE},
    GroupState.DEAD: set(GroupState),
}


@dataclass(slots=True)
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]  # (name, metadata) in the member's preference order
    assignment: bytes = b""
    join_future: asyncio.Future | None = None  # awaiting its JoinGroup response
    sync_future: asyncio.Future | None = None  # awaiting its SyncGroup response
    is_new: bool = False  # joined in this rebalance (Kafka's MemberMetadata.isNew)
    heartbeat_deadline: float = 0.0  # monotonic seconds

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        return b""

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols

    def vote(self, candidates: set[str]) -> str:
        """The member's first preferred protocol among `candidates` (MemberMetadata.vote)."""
        return next(name for name, _ in self.protocols if name in candidates)


@dataclass(slots=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int = -1


@dataclass
class Group:
    group_id: str
    state: GroupState = GroupState.EMPTY
    protocol_type: str | None = None
    protocol: str | None = None
    generation: int = 0
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # group instance id -> member id
    pending_members: set[str] = field(default_factory=set)  # KIP-394: ids handed out, not joined yet
    pending_sync: set[str] = field(default_factory=set)  # members yet to SyncGroup this generation
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    # partitions whose plain OffsetCommit is being appended (GroupMetadata.pendingOffsetCommits):
    # OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for them until it is done
    committing: Counter = field(default_factory=Counter)
    current_state_timestamp: int | None = None
    new_member_added: bool = False

    # --- state ------------------------------------------------------------------------------------
    def transition(self, state: GroupState, now_ms: int) -> None:
        if self.state not in _VALID_PREVIOUS[state]:
            raise RuntimeError(f"group {self.group_id}: {self.state.value} -> {state.value} is not allowed")
        self.state = state
        self.current_state_timestamp = now_ms

    def is_(self, state: GroupState) -> bool:
        return self.state is state

    @property
    def is_empty(self) -> bool:
        return not self.members

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    # --- protocols --------------------------------------------------------------------------------
    def candidate_protocols(self) -> set[str]:
        """Protocols every member supports (GroupMetadata.candidateProtocols)."""
        sets = [{name for name, _ in m.protocols} for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def supports_protocols(self, protocol_type: str, protocols: list[str]) -> bool:
        """A joiner fits when the group is empty (with a protocol type given and a protocol), or has the
        same protocol type and shares a protocol with every member (GroupMetadata.supportsProtocols)."""
        if self.is_empty:
            return bool(protocol_type) and bool(protocols)
        return self.protocol_type == protocol_type and bool(self.candidate_protocols() & set(protocols))

    def select_protocol(self) -> str:
        """Each member votes for its first preferred candidate; most votes wins (ties: any)."""
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = m.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(sorted(votes), key=lambda name: votes[name])

    # --- members ----------------------------------------------------------------------------------
    def add(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        self.pending_sync.discard(member_id)
        if member is None:
            return None
        if member.group_instance_id is not None and self.static_members.get(member.group_instance_id) == member_id:
            del self.static_members[member.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def replace_static(self, instance_id: str, new_member_id: str) -> Member:
        """KIP-345: a static member rejoining with an unknown member id takes over the old member."""
        old_id = self.static_members[instance_id]
        member = self.members.pop(old_id)
        member.member_id = new_member_id
        self.members[new_member_id] = member
        self.static_members[instance_id] = new_member_id
        if self.leader_id == old_id:
            self.leader_id = new_member_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_member_id)
        return member

    def awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.join_future is not None)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.awaiting_join() and not self.pending_members

    def subscribed_topics(self) -> set[str] | None:
        """Topics the consumer members subscribe to (ConsumerProtocol), None when unknown."""
        if self.protocol_type != "consumer" or self.protocol is None:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            found = topics_of(m.metadata(self.protocol))
            if found is None:
                return None
            topics |= found
        return topics

    # --- the record Kafka stores ------------------------------------------------------------------
    def to_record(self, now_ms: int) -> GroupValue:
        return GroupValue(
            protocol_type=self.protocol_type or "", generation=self.generation, protocol=self.protocol,
            leader=self.leader_id, current_state_timestamp=self.current_state_timestamp or now_ms,
            members=[MemberValue(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                                 m.session_timeout_ms, m.metadata(self.protocol or ""), m.assignment)
                     for m in self.members.values()])

    @classmethod
    def from_record(cls, group_id: str, value: GroupValue) -> "Group":
        group = cls(group_id, protocol_type=value.protocol_type or None, protocol=value.protocol,
                    generation=value.generation, leader_id=value.leader,
                    current_state_timestamp=None if value.current_state_timestamp == -1 else value.current_state_timestamp)
        for m in value.members:
            group.members[m.member_id] = Member(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                                m.rebalance_timeout, m.session_timeout, value.protocol_type,
                                                [(value.protocol or "", m.subscription)], m.assignment)
            if m.group_instance_id is not None:
                group.static_members[m.group_instance_id] = m.member_id
        group.state = GroupState.STABLE if group.members else GroupState.EMPTY
        return group

    def offset_value(self, key: tuple[str, int]) -> OffsetValue:
        o = self.offsets[key]
        return OffsetValue(o.offset, o.leader_epoch, o.metadata, o.commit_timestamp, o.expire_timestamp)
