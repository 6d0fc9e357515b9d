"""Idempotent producers' state per partition (Kafka's `ProducerStateManager` and
`ProducerAppendInfo`): per producer id its epoch and the last 5 batches' sequence ranges.

A retried batch (same epoch, same sequence range as a retained batch) is a duplicate answered
with its original offsets; a gap is OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch is
INVALID_PRODUCER_EPOCH; a new epoch must start at sequence 0; an unknown producer id is accepted
at any sequence (KIP-360: its state may have been removed by retention). State is rebuilt from
the batch headers when a log is loaded or truncated. Transactions: the ongoing transaction's
first offset per producer and the aborted list are kept for the last stable offset. A transaction
whose marker is written stays unstable until the high watermark passes the marker (Kafka's
`unreplicatedTxns`, dropped by `onHighWatermarkUpdated`), so the last stable offset never lets a
read_committed consumer see a transaction whose outcome a new leader could still lose.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from . import batch as B
from . import records as R
from .errors import ErrorCode, StorageError

NUM_BATCHES_TO_RETAIN = 5


@dataclass(slots=True)
class BatchMeta:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass
class ProducerEntry:
    producer_id: int
    epoch: int
    batches: deque = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))
    last_timestamp: int = -1
    txn_first_offset: int | None = None
    coordinator_epoch: int = -1  # of the last transaction marker

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else B.NO_SEQUENCE

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def find_duplicate(self, h: B.BatchHeader) -> BatchMeta | None:
        if h.producer_epoch != self.epoch:
            return None
        last_seq = h.last_sequence
        for meta in self.batches:
            if meta.first_seq == h.base_sequence and meta.last_seq == last_seq:
                return meta
        return None


@dataclass(slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == B.INT32_MAX)


class ProducerState:
    def __init__(self, tp: str = ""):
        self.tp = tp
        self.producers: dict[int, ProducerEntry] = {}
        self.aborted: list[AbortedTxn] = []
        self.unreplicated: list[tuple[int, int]] = []  # (first offset, marker offset) of completed transactions

    def check(self, h: B.BatchHeader, offset: int) -> BatchMeta | None:
        """A client batch against the state: the retained duplicate it repeats, or None when it
        may be appended; StorageError when Kafka rejects it."""
        if not h.has_producer_id:
            return None
        entry = self.producers.get(h.producer_id)
        if entry is None:
            return None
        duplicate = entry.find_duplicate(h)
        if duplicate is not None:
            return duplicate
        self.check_epoch(h, offset)
        if h.producer_epoch != entry.epoch:
            if h.base_sequence != 0:
                raise StorageError(
                    ErrorCode.out_of_order_sequence_number,
                    f"Invalid sequence number for new epoch of producer {h.producer_id} at "
                    f"offset {offset} in partition {self.tp}: {h.producer_epoch} (request epoch), "
                    f"{h.base_sequence} (seq. number), {entry.epoch} (current producer epoch)",
                )
        elif not _in_sequence(entry.last_seq, h.base_sequence):
            raise StorageError(
                ErrorCode.out_of_order_sequence_number,
                f"Out of order sequence number for producer {h.producer_id} at offset {offset} "
                f"in partition {self.tp}: {h.base_sequence} (incoming seq. number), "
                f"{entry.last_seq} (current end sequence number)",
            )
        return None

    def check_epoch(self, h: B.BatchHeader, offset: int) -> None:
        """A data batch of an older epoch than the producer's last is INVALID_PRODUCER_EPOCH, whatever
        its origin but replication (ProducerAppendInfo.checkProducerEpoch): so a TxnOffsetCommit
        retried after the coordinator aborted (and bumped the epoch of) its transaction is refused."""
        entry = self.producers.get(h.producer_id) if h.has_producer_id else None
        if entry is not None and h.producer_epoch < entry.epoch:
            raise StorageError(
                ErrorCode.invalid_producer_epoch,
                f"Epoch of producer {h.producer_id} at offset {offset} in {self.tp} is "
                f"{h.producer_epoch}, which is smaller than the last seen epoch {entry.epoch}",
            )

    def check_marker(self, buf, h: B.BatchHeader) -> None:
        """A transaction marker from an older coordinator than the producer's last one is
        TRANSACTION_COORDINATOR_FENCED (ProducerAppendInfo.appendEndTxnMarker)."""
        coordinator_epoch = R.marker_coordinator_epoch(buf, h) if h.has_producer_id else None
        entry = self.producers.get(h.producer_id)
        if entry is not None and coordinator_epoch is not None and coordinator_epoch < entry.coordinator_epoch:
            raise StorageError(
                ErrorCode.transaction_coordinator_fenced,
                f"Invalid coordinator epoch for producer {h.producer_id} in {self.tp}: {coordinator_epoch} "
                f"(zombie), {entry.coordinator_epoch} (current)",
            )

    def apply(self, buf, h: B.BatchHeader) -> None:
        """update() from a batch in `buf`: a marker's type and coordinator epoch come from its record."""
        if h.is_control:
            self.update(h, R.control_type(buf, h), R.marker_coordinator_epoch(buf, h))
        else:
            self.update(h)

    def update(self, h: B.BatchHeader, control_type: int | None = None, coordinator_epoch: int | None = None) -> None:
        """Record an appended batch (leader or follower; `control_type` 0 abort / 1 commit, with
        the marker's coordinator epoch)."""
        if not h.has_producer_id:
            return
        entry = self.producers.get(h.producer_id)
        if entry is None:
            entry = self.producers[h.producer_id] = ProducerEntry(h.producer_id, h.producer_epoch)
        elif h.producer_epoch != entry.epoch:
            entry.epoch = h.producer_epoch
            entry.batches.clear()
        entry.last_timestamp = h.max_timestamp
        if h.is_control:
            if coordinator_epoch is not None:
                entry.coordinator_epoch = max(entry.coordinator_epoch, coordinator_epoch)
            if entry.txn_first_offset is not None:
                self.unreplicated.append((entry.txn_first_offset, h.last_offset))
                if control_type == 0:
                    self.aborted.append(AbortedTxn(h.producer_id, entry.txn_first_offset, h.last_offset))
            entry.txn_first_offset = None
            return
        if h.base_sequence >= 0:
            entry.batches.append(
                BatchMeta(h.base_sequence, h.last_sequence, h.base_offset, h.last_offset, h.max_timestamp)
            )
        if h.is_transactional and entry.txn_first_offset is None:
            entry.txn_first_offset = h.base_offset

    def copy(self) -> ProducerState:
        """A snapshot (Kafka writes one per segment roll)."""
        out = ProducerState(self.tp)
        out.producers = {
            pid: ProducerEntry(e.producer_id, e.epoch, deque(e.batches, maxlen=NUM_BATCHES_TO_RETAIN),
                               e.last_timestamp, e.txn_first_offset, e.coordinator_epoch)
            for pid, e in self.producers.items()
        }
        out.aborted = list(self.aborted)
        out.unreplicated = list(self.unreplicated)
        return out

    def first_unstable_offset(self, high_watermark: int) -> int | None:
        """Smallest first offset of an ongoing transaction, or of a completed one whose marker is
        not yet below the high watermark (ProducerStateManager.firstUnstableOffset)."""
        firsts = [e.txn_first_offset for e in self.producers.values() if e.txn_first_offset is not None]
        firsts += [first for first, marker in self.unreplicated if marker >= high_watermark]
        return min(firsts) if firsts else None

    def on_high_watermark(self, high_watermark: int) -> None:
        """Forget completed transactions whose marker the high watermark has passed."""
        if self.unreplicated and self.unreplicated[0][1] < high_watermark:
            self.unreplicated = [t for t in self.unreplicated if t[1] >= high_watermark]

    def expire(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers idle longer than producer.id.expiration.ms (Kafka's
        `removeExpiredProducers`; one with an open transaction stays). Returns how many."""
        gone = [
            pid for pid, e in self.producers.items()
            if e.txn_first_offset is None and now_ms - e.last_timestamp >= expiration_ms
        ]
        for pid in gone:
            del self.producers[pid]
        return len(gone)

    def last_entry(self, producer_id: int) -> ProducerEntry | None:
        return self.producers.get(producer_id)

    def clear(self) -> None:
        self.producers.clear()
        self.aborted.clear()
        self.unreplicated.clear()
