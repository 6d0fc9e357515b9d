"""Partition reassignment rules (KIP-455) of Kafka's ZooKeeper-mode controller, free of sockets.

Sources (Kafka 3.9): kafka.controller.ReplicaAssignment (replicas = target ++ origin while a
reassignment runs, adding = replicas - origin, removing = replicas - target), KafkaController
.validateReplicas / maybeBuildReassignment (errors and messages of AlterPartitionReassignments),
isReassignmentComplete (every target replica in the ISR) and Election.leaderForReassign (the
first target replica that is live and in sync).
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from .errors import ErrorCode
from .topic_names import java_int_hash, scala_set_order

PARTITION_NOT_FOUND = "The partition does not exist."


@dataclass(frozen=True, slots=True)
class Assignment:
    """One partition's full replica assignment (Kafka's ReplicaAssignment)."""

    replicas: list[int]
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)

    @property
    def origin(self) -> list[int]:
        return [r for r in self.replicas if r not in self.adding]

    @property
    def target(self) -> list[int]:
        return [r for r in self.replicas if r not in self.removing]

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    def reassign_to(self, target: Sequence[int]) -> "Assignment":
        """ReplicaAssignment.reassignTo: the target first, in its order, then the origin replicas."""
        origin = self.origin
        full = list(dict.fromkeys([*target, *origin]))
        return Assignment(full, [r for r in full if r not in origin], [r for r in full if r not in target])


def scala_buffer(values: Sequence[int]) -> str:
    """How Scala prints the replica lists Kafka builds from a request (an ArrayBuffer)."""
    return f"ArrayBuffer({', '.join(str(v) for v in values)})"


def scala_set(values: Collection[int]) -> str:
    """How Scala prints ControllerContext.liveBrokerIds (an immutable Set built in broker id order)."""
    return f"Set({', '.join(str(v) for v in scala_set_order(sorted(values), java_int_hash))})"


def validate(current: Assignment, target: Sequence[int], live: Collection[int]) -> tuple[ErrorCode, str] | None:
    """KafkaController.validateReplicas: the error of a target replica list, or None."""
    if not target:
        return ErrorCode.invalid_replica_assignment, "Empty replica list specified in partition reassignment."
    if len(set(target)) != len(target):
        return (ErrorCode.invalid_replica_assignment,
                f"Duplicate replica ids in partition reassignment replica list: {scala_buffer(target)}")
    if any(r < 0 for r in target):
        return ErrorCode.invalid_replica_assignment, f"Invalid broker id in replica list: {scala_buffer(target)}"
    adding = current.reassign_to(target).adding
    if not set(adding) <= set(live):
        return (ErrorCode.invalid_replica_assignment,
                f"Replica assignment has brokers that are not alive. Replica list: {scala_buffer(adding)}, "
                f"live broker list: {scala_set(live)}")
    return None


def build(current: Assignment, target: Sequence[int] | None) -> Assignment | None:
    """KafkaController.maybeBuildReassignment: the assignment to move to; a null target cancels a
    reassignment in progress (back to its origin replicas). None: nothing to cancel."""
    if current.reassigning:
        return current.reassign_to(current.origin if target is None else target)
    return None if target is None else current.reassign_to(target)


def complete(assignment: Assignment, isr: Collection[int]) -> bool:
    """KafkaController.isReassignmentComplete: not reassigning, or every target replica in sync."""
    return not assignment.reassigning or set(assignment.target) <= set(isr)


def reassign_leader(target: Sequence[int], isr: Collection[int], live: Collection[int]) -> int | None:
    """Election.leaderForReassign: the first target replica that is live and in the ISR."""
    return next((r for r in target if r in live and r in isr), None)
