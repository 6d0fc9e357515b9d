"""A transactional id's state (Kafka's TransactionMetadata and TransactionState).

Transitions (TransactionState.validPreviousStates): Empty/CompleteCommit/CompleteAbort -> Ongoing
(AddPartitionsToTxn / AddOffsetsToTxn); Ongoing -> PrepareCommit / PrepareAbort (EndTxn, or the
timeout's abort); Prepare* -> Complete* once every partition has its marker; Ongoing ->
PrepareEpochFence (a new InitProducerId fences an open transaction, then aborts it); Empty /
Complete* -> Empty (InitProducerId's epoch bump). Ids are TransactionState.id, the int8 written
in TransactionLogValue.TransactionStatus.
"""

import enum
import time
from dataclasses import dataclass, field

TopicPartition = tuple[str, int]


class TxnState(enum.IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def display(self) -> str:
        """The name DescribeTransactions / ListTransactions use (TransactionState.name)."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    @classmethod
    def from_display(cls, name: str) -> "TxnState | None":
        return next((s for s in cls if s.display == name), None)


PREPARING = (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)
COMPLETE = (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


@dataclass
class TxnMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    partitions: set[TopicPartition] = field(default_factory=set)
    start_ms: int = -1
    update_ms: int = -1
    last_producer_id: int = -1
    last_producer_epoch: int = -1
    pending: bool = False  # a state record is being appended (CONCURRENT_TRANSACTIONS meanwhile)

    def partitions_by_topic(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for topic, index in sorted(self.partitions):
            out.setdefault(topic, []).append(index)
        return out


def now_ms() -> int:
    return int(time.time() * 1000)


class TxnStats:
    """Counts for the broker's metrics (fauxka/broker/coordination/txn_metrics.py), kept as plain numbers here."""

    def __init__(self) -> None:
        self.completed = {True: 0, False: 0}  # Complete{Commit,Abort} taken effect, by commit
        self.timed_out = 0  # transactions aborted for transaction.timeout.ms
        self.markers_count, self.markers_seconds = 0, 0.0  # Prepare* replicated -> every marker written

    def markers_written(self, seconds: float) -> None:
        self.markers_count += 1
        self.markers_seconds += seconds
