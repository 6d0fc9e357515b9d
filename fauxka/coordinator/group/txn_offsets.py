"""Transactional offset commits (KIP-98, KIP-447; GroupMetadataManager.storeOffsets with a producer
id, GroupMetadata.prepareTxnOffsetCommit / completePendingTxnOffsetCommit).

TxnOffsetCommit appends the offsets to the group's __consumer_offsets partition as a transactional
batch of the producer (acks=all) and keeps them pending; when the transaction's marker is written
to that partition (WriteTxnMarkers), a COMMIT makes them the group's committed offsets and an
ABORT drops them. Loading a partition replays the same: transactional offset records wait for
their producer's marker in the log, and those still without one stay pending.
"""

from typing import Callable

from fauxka.model.errors import ErrorCode

from .commit_check import offset_commit_error
from .records import OffsetKey, OffsetValue, encode_key, encode_offset_value
from .rebalance import now_ms, store_error
from .state import CommittedOffset, Group, GroupState

TopicPartition = tuple[str, int]


class TxnOffsets:
    groups: dict[str, Group]

    @property
    def pending_txn_offsets(self) -> dict[int, dict[str, dict[TopicPartition, CommittedOffset]]]:
        """producer id -> group id -> {partition: offset} waiting for the transaction's marker."""
        pending = self.__dict__.get("_pending_txn")
        if pending is None:
            pending = self.__dict__["_pending_txn"] = {}
        return pending

    async def txn_commit_offsets(self, group_id: str, producer_id: int, epoch: int, member_id: str,
                                 instance_id: str | None, generation: int, offsets: dict) -> dict[TopicPartition, ErrorCode]:
        """TxnOffsetCommit (handleTxnCommitOffsets): an unknown group is added Empty, as Kafka adds it,
        then the committer is checked as OffsetCommit's (commit_check.py) but for the transactional
        exception (no member needed)."""
        def all_(code):
            return {tp: code for tp in offsets}
        if not group_id:
            return all_(ErrorCode.invalid_group_id)
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id, current_state_timestamp=now_ms())
        error = offset_commit_error(group, member_id, instance_id, generation, transactional=True)
        if error is not None:
            return all_(error)
        results: dict[TopicPartition, ErrorCode] = {}
        accepted: dict[TopicPartition, CommittedOffset] = {}
        now = now_ms()
        for tp, req in offsets.items():
            if len((req.metadata or "").encode()) > self.config.offset_metadata_max_bytes:
                results[tp] = ErrorCode.offset_metadata_too_large
            else:
                accepted[tp] = CommittedOffset(req.offset, req.leader_epoch, req.metadata or "", now, -1)
        if accepted:
            records = [(encode_key(OffsetKey(group_id, t, p)),
                        encode_offset_value(OffsetValue(c.offset, c.leader_epoch, c.metadata, c.commit_timestamp)))
                       for (t, p), c in accepted.items()]
            code = store_error(await self.runtime.write_batch(group_id, records, producer=(producer_id, epoch)))
            if code == ErrorCode.none:
                self.pending_txn_offsets.setdefault(producer_id, {}).setdefault(group_id, {}).update(accepted)
            results.update(dict.fromkeys(accepted, code))
        return results

    def pending_txn_partitions(self, group_id: str) -> set[TopicPartition]:
        """OffsetFetch with require_stable (KIP-447): these answer UNSTABLE_OFFSET_COMMIT."""
        return {tp for by_group in self.pending_txn_offsets.values() for tp in by_group.get(group_id, ())}

    def replay_txn_offset(self, producer_id: int, key: OffsetKey, value: CommittedOffset) -> None:
        self.pending_txn_offsets.setdefault(producer_id, {}).setdefault(key.group, {})[(key.topic, key.partition)] = value

    def unload_txn_offsets(self, keep: Callable[[str], bool]) -> None:
        """The groups `keep` rejects moved away: their pending offsets go with them (Kafka keeps them
        in the GroupMetadata it unloads); the new coordinator's replay has them, and their marker."""
        for producer_id, by_group in list(self.pending_txn_offsets.items()):
            for group_id in [g for g in by_group if not keep(g)]:
                del by_group[group_id]
            if not by_group:
                del self.pending_txn_offsets[producer_id]

    def complete_txn_offsets(self, producer_id: int, commit: bool, in_partition: Callable[[str], bool]) -> None:
        """The producer's marker is in the groups' partition (written, or replayed): its pending
        offsets of the groups `in_partition` become committed (COMMIT) or are dropped (ABORT)."""
        by_group = self.pending_txn_offsets.get(producer_id)
        if not by_group:
            return
        for group_id in [g for g in by_group if in_partition(g)]:
            offsets = by_group.pop(group_id)
            if not commit:
                continue
            group = self.groups.get(group_id)
            if group is None:
                group = self.groups[group_id] = Group(group_id)
            group.offsets.update(offsets)
            if self.metrics is not None:
                self.metrics.commits(len(offsets))
        if not by_group:
            self.pending_txn_offsets.pop(producer_id, None)
