"""Which replica a consumer should read a partition from (KIP-392), decided by its leader.

Kafka's `ReplicaManager.findPreferredReadReplica` with `RackAwareReplicaSelector`, the one selector
Kafka ships (`replica.selector.class`; unset: consumers read from the leader). The candidates are the
leader and the followers in the ISR whose log holds the fetch offset and that are live with an
endpoint on the consumer's listener. A consumer in the leader's rack, or in no candidate's rack, or
with no rack, reads from the leader; otherwise from the most caught-up candidate of its rack (the
largest log end offset, then the one caught up most recently, then the highest broker id). The
leader is never named as the preferred replica: -1 means "stay with the leader". Pure rules.
"""

from dataclasses import dataclass

NO_PREFERENCE = -1


@dataclass(frozen=True, slots=True)
class ReplicaView:
    broker_id: int
    rack: str | None
    log_end_offset: int
    since_caught_up_ms: float  # the leader's: 0


def select_rack_aware(client_rack: str, leader: ReplicaView, candidates: list[ReplicaView]) -> ReplicaView:
    """RackAwareReplicaSelector.select over the leader and `candidates` (the followers it may pick)."""
    if not client_rack:
        return leader
    same_rack = [r for r in [leader, *candidates] if r.rack == client_rack]
    if not same_rack or leader in same_rack:
        return leader
    # ReplicaView.comparator(): log end offset, then time since caught up (reversed), then broker id
    return max(same_rack, key=lambda r: (r.log_end_offset, -r.since_caught_up_ms, r.broker_id))


def preferred_read_replica(partition, client_rack: str, fetch_offset: int, now_ms: float,
                           racks: dict[int, str | None]) -> int:
    """The follower a consumer's fetch at this leader should go to, or NO_PREFERENCE.
    `partition`: a replication.partition.Partition this broker leads; `racks`: broker id -> rack of
    the live brokers with an endpoint on the consumer's listener."""
    candidates = []
    for broker_id, state in partition.followers.items():
        if (broker_id in partition.isr and broker_id in racks and state.log_end_offset >= fetch_offset
                and state.log_start_offset <= fetch_offset):
            candidates.append(ReplicaView(broker_id, racks[broker_id], state.log_end_offset,
                                          now_ms - state.last_caught_up_ms))
    leader = ReplicaView(partition.broker_id, racks.get(partition.broker_id), partition.log_end_offset, 0)
    chosen = select_rack_aware(client_rack, leader, candidates)
    return NO_PREFERENCE if chosen.broker_id == partition.broker_id else chosen.broker_id
