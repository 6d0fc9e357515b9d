"""One partition replica on this broker: its log and its role (leader or follower).

Kafka's `kafka.cluster.Partition` in small. As leader it tracks what each follower has
fetched (its log end offset and when it last caught up) and moves the high watermark to the
smallest log end offset of the in-sync replicas (Partition.maybeIncrementLeaderHW). Socket-free:
the replica manager feeds it partition states and fetches and acts on what it answers.
"""

import itertools
from dataclasses import dataclass, field

from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.storage.config import LogConfig
from fauxka.storage.log import AppendInfo, PartitionLog

# A token per leadership begun on this broker (unique across Partition objects): an acks=all
# Produce waits as long as the leadership it appended in lasts, whatever the epoch bumps.
_LEADERSHIPS = itertools.count(1)


@dataclass(slots=True)
class FollowerState:
    log_end_offset: int = -1  # unknown until the follower's first fetch
    last_caught_up_ms: float = 0.0  # last time its fetch reached the leader's end offset
    last_fetch_leader_leo: int = 0  # the leader's end offset at the follower's previous fetch
    last_fetch_ms: float = 0.0
    log_start_offset: int = -1  # what the follower's last fetch said (DeleteRecords' low watermark)


@dataclass(slots=True)
class Partition:
    topic: str
    index: int
    log: PartitionLog
    broker_id: int
    leader_id: int = -1
    leader_epoch: int = -1
    partition_epoch: int = -1  # the state znode's version (AlterPartition's partition epoch)
    replicas: list[int] = field(default_factory=list)
    isr: list[int] = field(default_factory=list)
    followers: dict[int, FollowerState] = field(default_factory=dict)
    # the ISR an AlterPartition in flight asks for (Kafka's PendingShrinkIsr/PendingExpandIsr); None: none
    pending_isr: list[int] | None = None
    leadership: int = 0  # this broker's current leadership of it (0: none yet); a new one per become-leader from not leading
    # where this leader's epoch began (Kafka's leaderEpochStartOffsetOpt): until the high watermark
    # reaches it, ListOffsets' latest is not known (OFFSET_NOT_AVAILABLE); None: not the leader
    epoch_start_offset: int | None = None

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.index

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.broker_id

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    def under_min_isr(self) -> bool:
        """The ISR is smaller than the topic's min.insync.replicas (acks=all is refused or fails)."""
        return len(self.isr) < self.log.min_insync_replicas

    def append_records_to_leader(self, records: bytes, acks: int, now_ms: int, origin: str = "client") -> AppendInfo:
        """Kafka's Partition.appendRecordsToLeader: acks=-1 is refused (NOT_ENOUGH_REPLICAS) while the
        ISR is smaller than min.insync.replicas; else the batch goes into the log at this leader epoch."""
        if acks == -1 and self.under_min_isr():
            raise KafkaError(ErrorCode.not_enough_replicas,
                             f"The size of the current ISR {set(self.isr)} is insufficient to satisfy the min.isr "
                             f"requirement of {self.log.min_insync_replicas} for partition {self.topic}-{self.index}")
        return self.log.append_as_leader(records, self.leader_epoch, now_ms, origin=origin)

    def reconfigure(self, config: LogConfig) -> None:
        """The topic's configs changed (the log applies them from its next append, roll or clean-up)."""
        self.log.config = config

    # --- role changes (from the partition state the controller wrote) -------------------------

    def become_leader(self, leader_epoch: int, isr: list[int], replicas: list[int], partition_epoch: int,
                      now_ms: float) -> bool:
        """Leader for `leader_epoch`: the epoch starts at our log end offset (Partition.makeLeader).
        True when this is a new leadership (a new epoch), not just a new ISR."""
        new_epoch = not self.is_leader or leader_epoch != self.leader_epoch
        if not self.is_leader:
            self.leadership = next(_LEADERSHIPS)
        self.leader_id, self.leader_epoch, self.partition_epoch = self.broker_id, leader_epoch, partition_epoch
        self.isr, self.replicas = list(isr), list(replicas)
        if new_epoch:
            self.epoch_start_offset = self.log.log_end_offset
            latest = self.log.latest_epoch()
            if latest is None or latest < leader_epoch:
                self.log.assign_epoch(leader_epoch, self.log.log_end_offset)
            # Kafka resets the followers' state on a new leadership: their end offsets are unknown
            self.followers = {r: FollowerState(last_caught_up_ms=now_ms if r in isr else 0.0)
                              for r in replicas if r != self.broker_id}
            self.pending_isr = None
        else:
            for r in replicas:
                if r != self.broker_id and r not in self.followers:
                    self.followers[r] = FollowerState()
            for r in [r for r in self.followers if r not in replicas]:  # reassigned away
                del self.followers[r]
        return new_epoch

    def become_follower(self, leader_id: int, leader_epoch: int, isr: list[int], replicas: list[int],
                        partition_epoch: int) -> bool:
        """Follower of `leader_id`; True when the leader or the epoch changed (fetch from the new one)."""
        changed = leader_id != self.leader_id or leader_epoch != self.leader_epoch
        self.leader_id, self.leader_epoch, self.partition_epoch = leader_id, leader_epoch, partition_epoch
        self.isr, self.replicas = list(isr), list(replicas)
        self.followers = {}
        self.pending_isr = None
        self.epoch_start_offset = None
        return changed

    def offsets_not_available(self) -> bool:
        """A new leader whose high watermark has not reached the start of its epoch: what the old
        leader had committed past it is not known yet (Partition.fetchOffsetForTimestamp)."""
        return self.epoch_start_offset is not None and self.epoch_start_offset > self.log.high_watermark

    # --- leader bookkeeping ----------------------------------------------------------------------

    @property
    def isr_change_pending(self) -> bool:
        return self.pending_isr is not None

    @property
    def maximal_isr(self) -> list[int]:
        """The ISR the high watermark waits for (Kafka's PartitionState.maximalIsr): the committed
        one plus a replica an expansion in flight adds. The controller may already have written
        it, and from then on that replica can be elected leader: a record acknowledged without it
        would be lost (a shrink in flight keeps the larger, committed ISR)."""
        if self.pending_isr is None:
            return self.isr
        return self.isr + [r for r in self.pending_isr if r not in self.isr]

    def check_epoch(self, current_leader_epoch: int) -> ErrorCode | None:
        """Partition.getLocalLog's fencing: an older epoch is fenced, a newer one not known yet."""
        if current_leader_epoch < 0 or current_leader_epoch == self.leader_epoch:
            return None
        if current_leader_epoch < self.leader_epoch:
            return ErrorCode.fenced_leader_epoch
        return ErrorCode.unknown_leader_epoch

    def maybe_advance_high_watermark(self) -> bool:
        """HW = the smallest log end offset of the maximal ISR's replicas (followers not yet heard
        from hold it back). True when it moved."""
        if not self.is_leader:
            return False
        log = self.log
        hw = log.log_end_offset
        for replica in self.maximal_isr:
            if replica != self.broker_id:
                state = self.followers.get(replica)
                hw = min(hw, state.log_end_offset if state else -1)
        if hw > log.high_watermark:
            log.high_watermark = hw
            return True
        return False

    def low_watermark(self, live: set[int]) -> int:
        """The smallest log start offset of the live replicas (Partition.lowWatermarkIfLeader)."""
        starts = [self.log.log_start_offset]
        starts += [s.log_start_offset for r, s in self.followers.items() if r in live]
        return min(starts)

    def update_follower(self, replica_id: int, fetch_offset: int, now_ms: float, log_start_offset: int = -1) -> bool:
        """A follower fetched from `fetch_offset`: it has everything before it
        (Partition.updateFollowerFetchState; caught up = reached the leader's end offset now, or
        the end offset the leader had at its previous fetch). True when its log start offset moved
        (the partition's low watermark may have: DeleteRecords waiters look again)."""
        state = self.followers.get(replica_id)
        if state is None:
            state = self.followers[replica_id] = FollowerState()
        leo = self.log.log_end_offset
        if fetch_offset >= leo:
            state.last_caught_up_ms = now_ms
        elif fetch_offset >= state.last_fetch_leader_leo:
            state.last_caught_up_ms = max(state.last_caught_up_ms, state.last_fetch_ms)
        state.log_end_offset = fetch_offset
        start_moved = state.log_start_offset != log_start_offset
        state.log_start_offset = log_start_offset
        state.last_fetch_leader_leo = leo
        state.last_fetch_ms = now_ms
        return start_moved

    def expansion_candidate(self, replica_id: int) -> list[int] | None:
        """The ISR with `replica_id` added, when it is out of the ISR and has caught up to the high
        watermark and past the start of this leader's epoch (Partition.isFollowerInSync)."""
        if not self.is_leader or replica_id in self.isr or replica_id not in self.replicas or self.isr_change_pending:
            return None
        state = self.followers.get(replica_id)
        if state is None or state.log_end_offset < self.log.high_watermark:
            return None
        epoch_start = self._epoch_start_offset()
        if epoch_start is not None and state.log_end_offset < epoch_start:
            return None
        return sorted(self.isr + [replica_id])

    def shrink_candidate(self, now_ms: float, lag_max_ms: int) -> list[int] | None:
        """The ISR without the followers that have not caught up for `lag_max_ms`
        (Partition.getOutOfSyncReplicas); None when nobody is out of sync. A follower at the
        leader's end offset is in sync however long ago it fetched (Replica.isCaughtUp): an idle
        partition keeps a paused follower."""
        if not self.is_leader or self.isr_change_pending:
            return None
        leo = self.log.log_end_offset
        out = [r for r in self.isr if r != self.broker_id and
               (state := self.followers.get(r, FollowerState())).log_end_offset != leo and
               now_ms - state.last_caught_up_ms > lag_max_ms]
        if not out:
            return None
        return [r for r in self.isr if r not in out]

    def _epoch_start_offset(self) -> int | None:
        epoch, end = self.log.end_offset_for_epoch(self.leader_epoch - 1) if self.leader_epoch > 0 else (-1, -1)
        return end if epoch >= 0 else None
