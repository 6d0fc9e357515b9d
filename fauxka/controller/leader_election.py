"""Partition leader election rules of Kafka's ZooKeeper-mode controller, free of sockets.

Sources (Kafka 3.9): kafka.controller.Election (offline, preferred and controlled-shutdown
strategies), PartitionStateMachine.leaderForOffline (the new ISR), ReplicaStateMachine
.doRemoveReplicasFromIsr (a replica leaving the ISR; the last ISR member is kept) and
KafkaController.checkAndTriggerAutoLeaderRebalance (imbalance ratio per preferred broker).
Every state the controller writes carries leader_epoch + 1 (LeaderAndIsr.newLeaderAndIsr),
including an ISR shrink that keeps the leader; AlterPartition from a leader does not bump it.
"""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from fauxka.zkstore.paths import PartitionState

NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class Partition:
    """What the rules need of one partition: its assignment and current state."""

    topic: str
    partition: int
    replicas: list[int]  # assignment order; replicas[0] is the preferred leader
    state: PartitionState


def bumped(state: PartitionState, leader: int, isr: list[int], controller_epoch: int) -> PartitionState:
    """LeaderAndIsr.newLeaderAndIsr: the next leader epoch, written by this controller epoch."""
    return PartitionState(leader, state.leader_epoch + 1, controller_epoch, list(isr), state.zk_version)


def offline_leader(replicas: Sequence[int], isr: Collection[int], live: Collection[int],
                   unclean: bool) -> tuple[int, list[int]] | None:
    """Election.leaderForOffline: the first live in-sync replica in assignment order, else with
    unclean.leader.election.enable the first live replica (the ISR becomes [it]); None if none.
    The new ISR is the old one without the brokers that are not live."""
    leader = next((r for r in replicas if r in live and r in isr), None)
    if leader is not None:
        return leader, [r for r in isr if r in live]
    if unclean:
        leader = next((r for r in replicas if r in live), None)
        if leader is not None:
            return leader, [leader]
    return None


def preferred_leader(replicas: Sequence[int], isr: Collection[int], live: Collection[int]) -> int | None:
    """Election.leaderForPreferredReplica: the head of the assignment if it is live and in the ISR."""
    if replicas and replicas[0] in live and replicas[0] in isr:
        return replicas[0]
    return None


def controlled_shutdown_leader(replicas: Sequence[int], isr: Collection[int], live: Collection[int],
                               shutting_down: Collection[int]) -> tuple[int, list[int]] | None:
    """Election.leaderForControlledShutdown: the first live in-sync replica not shutting down;
    the new ISR drops the shutting-down brokers."""
    leader = next((r for r in replicas if r in live and r in isr and r not in shutting_down), None)
    if leader is None:
        return None
    return leader, [r for r in isr if r not in shutting_down]


def without_replica(state: PartitionState, replica: int, controller_epoch: int) -> PartitionState | None:
    """ReplicaStateMachine.doRemoveReplicasFromIsr: `replica` goes offline. Its leadership becomes
    NO_LEADER; it leaves the ISR unless it is the last member (Kafka keeps a one-member ISR so that
    the broker can lead again when it returns). None when `replica` is not in the ISR."""
    if replica not in state.isr:
        return None
    leader = NO_LEADER if state.leader == replica else state.leader
    isr = state.isr if len(state.isr) == 1 else [r for r in state.isr if r != replica]
    return bumped(state, leader, isr, controller_epoch)


def take_offline(p: Partition, replica: int, live: Collection[int], controller_epoch: int) -> PartitionState | None:
    """KafkaController.onReplicasBecomeOffline for a replica on a failed log directory (a
    `storage` fault): a partition it leads gets the offline election among the other live in-sync
    replicas (none: NO_LEADER), and it leaves the ISR (the last member stays, as without_replica).
    None when it neither leads nor is in sync."""
    state = p.state
    if replica != state.leader and replica not in state.isr:
        return None
    leader = state.leader
    if leader == replica:
        chosen = offline_leader(p.replicas, state.isr, [b for b in live if b != replica], False)
        leader = chosen[0] if chosen else NO_LEADER
    isr = [r for r in state.isr if r != replica] or list(state.isr)
    return bumped(state, leader, isr, controller_epoch)


def elect_offline(p: Partition, live: Collection[int], unclean: bool, controller_epoch: int) -> PartitionState | None:
    """The state an offline partition (leader dead or NO_LEADER) moves to, or None if none can lead."""
    chosen = offline_leader(p.replicas, p.state.isr, live, unclean)
    return None if chosen is None else bumped(p.state, chosen[0], chosen[1], controller_epoch)


def elect_preferred(p: Partition, live: Collection[int], controller_epoch: int) -> PartitionState | None:
    leader = preferred_leader(p.replicas, p.state.isr, live)
    return None if leader is None else bumped(p.state, leader, p.state.isr, controller_epoch)


def elect_given(p: Partition, target: int, live: Collection[int], controller_epoch: int) -> PartitionState | None:
    """fauxka's `leader` fault (librdkafka's mock partition_set_leader, here with real replication):
    `target` leads if it is a live in-sync replica of the partition; None otherwise, or when it leads."""
    if target not in p.replicas or target not in p.state.isr or target not in live or p.state.leader == target:
        return None
    return bumped(p.state, target, p.state.isr, controller_epoch)


def elect_controlled_shutdown(p: Partition, live: Collection[int], shutting_down: Collection[int],
                              controller_epoch: int) -> PartitionState | None:
    chosen = controlled_shutdown_leader(p.replicas, p.state.isr, live, shutting_down)
    return None if chosen is None else bumped(p.state, chosen[0], chosen[1], controller_epoch)


def needs_offline_election(p: Partition, live: Collection[int]) -> bool:
    """OfflinePartition: no leader, or a leader that is not a live broker."""
    return p.state.leader == NO_LEADER or p.state.leader not in live


def imbalanced_brokers(partitions: Sequence[Partition], percentage: int) -> dict[int, list[Partition]]:
    """checkAndTriggerAutoLeaderRebalance: for each preferred broker, the partitions it should lead
    but does not; only brokers whose ratio (not led / preferred) exceeds percentage / 100."""
    preferred: dict[int, list[Partition]] = {}
    for p in partitions:
        if p.replicas:
            preferred.setdefault(p.replicas[0], []).append(p)
    result = {}
    for broker, owned in preferred.items():
        not_led = [p for p in owned if p.state.leader != broker]
        if owned and len(not_led) / len(owned) > percentage / 100:
            result[broker] = not_led
    return result


def rebalance_candidates(partitions: Sequence[Partition], live: Collection[int], percentage: int,
                         deleting: Collection[str] = ()) -> list[Partition]:
    """The partitions the rebalance task moves back to their preferred leader: of an imbalanced
    broker, live, not being deleted (the election itself still needs it in the ISR)."""
    return [p for broker, ps in sorted(imbalanced_brokers(partitions, percentage).items()) if broker in live
            for p in ps if p.topic not in deleting]


@dataclass(frozen=True, slots=True)
class IsrChange:
    """One AlterPartition entry: the leader's view it asks to write."""

    broker_id: int
    leader_epoch: int
    new_isr: list[int]
    partition_epoch: int
    leader_recovery_state: int = 0


def check_alter_partition(current: PartitionState | None, change: IsrChange, live: Collection[int],
                          version: int) -> tuple[str, PartitionState | None]:
    """KafkaController.tryProcessAlterPartition for one partition: ("write", the state to write),
    ("same", the current state) for an idempotent retry, or (error name, None).

    Error names are kio ErrorCode members: unknown_topic_or_partition, not_controller (the leader
    has seen newer epochs than this controller), fenced_leader_epoch, invalid_update_version (stale
    partition epoch), invalid_request (recovery state), ineligible_replica (v2+; operation_not_attempted
    before) for a new ISR naming a broker that is not live. fauxka also fences a request from a
    broker that is not the leader of that epoch (fenced_leader_epoch), which Kafka cannot see."""
    if current is None:
        return "unknown_topic_or_partition", None
    if change.partition_epoch > current.zk_version or change.leader_epoch > current.leader_epoch:
        return "not_controller", None
    if change.leader_epoch < current.leader_epoch or change.broker_id != current.leader:
        return "fenced_leader_epoch", None
    if list(change.new_isr) == list(current.isr) and change.leader_recovery_state == 0:
        return "same", current
    if change.partition_epoch < current.zk_version:
        return "invalid_update_version", None
    if change.leader_recovery_state == 1 and len(change.new_isr) > 1:
        return "invalid_request", None
    if change.leader_recovery_state == 1:
        return "invalid_request", None  # RECOVERED never goes back to RECOVERING
    if set(change.new_isr) - set(live):
        return ("ineligible_replica" if version > 1 else "operation_not_attempted"), None
    return "write", PartitionState(current.leader, current.leader_epoch, current.controller_epoch,
                                   list(change.new_isr), current.zk_version)


def partitions_of(topics: Mapping[str, Mapping[int, list[int]]],
                  states: Mapping[tuple[str, int], PartitionState]) -> list[Partition]:
    """Every partition that has both an assignment and a state."""
    return [Partition(t, p, list(r), states[(t, p)])
            for t, parts in topics.items() for p, r in parts.items() if (t, p) in states]
