"""Transactional offset commits (KIP-98, KIP-447): TxnOffsetCommit's offsets wait, per producer id,
until the transaction's marker reaches the group's __consumer_offsets partition; a COMMIT makes
them the group's committed offsets, an ABORT drops them (GroupMetadata.prepareTxnOffsetCommit /
completePendingTxnOffsetCommit).

Where fauxka differs: Kafka appends the pending offsets to __consumer_offsets at TxnOffsetCommit
time inside the transaction; here they are kept in the coordinator's memory and appended (acks=all)
when the COMMIT marker arrives, so a group coordinator that moves between TxnOffsetCommit and
EndTxn loses them (the transaction's records still commit).
"""

from typing import Callable

from model.errors import ErrorCode

from .state import Group, GroupState

TopicPartition = tuple[str, int]


class TxnOffsets:
    groups: dict[str, Group]

    @property
    def pending_txn_offsets(self) -> dict[int, dict[str, dict]]:
        """producer id -> group id -> {partition: OffsetRequest}."""
        pending = self.__dict__.get("_pending_txn")
        if pending is None:
            pending = self.__dict__["_pending_txn"] = {}
        return pending

    def txn_commit_offsets(self, group_id: str, producer_id: int, member_id: str, instance_id: str | None,
                           generation: int, offsets: dict) -> dict[TopicPartition, ErrorCode]:
        """TxnOffsetCommit (handleTxnCommitOffsets): v3's member fields are checked like OffsetCommit's
        when the group is known and the generation given."""
        def all_(code):
            return {tp: code for tp in offsets}
        if not group_id:
            return all_(ErrorCode.invalid_group_id)
        group = self.groups.get(group_id)
        if group is not None and group.is_(GroupState.DEAD):
            return all_(ErrorCode.coordinator_not_available)
        if group is not None and generation >= 0:
            if instance_id is not None and group.static_members.get(instance_id, member_id) != member_id:
                return all_(ErrorCode.fenced_instance_id)
            if member_id not in group.members:
                return all_(ErrorCode.unknown_member_id)
            if generation != group.generation:
                return all_(ErrorCode.illegal_generation)
        results = {}
        accepted = {}
        for tp, req in offsets.items():
            if len((req.metadata or "").encode()) > self.config.offset_metadata_max_bytes:
                results[tp] = ErrorCode.offset_metadata_too_large
            else:
                accepted[tp] = req
                results[tp] = ErrorCode.none
        self.pending_txn_offsets.setdefault(producer_id, {}).setdefault(group_id, {}).update(accepted)
        return results

    def pending_txn_partitions(self, group_id: str) -> set[TopicPartition]:
        """OffsetFetch with require_stable (KIP-447): these answer UNSTABLE_OFFSET_COMMIT."""
        return {tp for by_group in self.pending_txn_offsets.values() for tp in by_group.get(group_id, ())}

    async def complete_txn_offsets(self, producer_id: int, commit: bool, partition_of: Callable[[str], int],
                                   partition: int) -> None:
        """The marker reached __consumer_offsets partition `partition`: its groups' pending offsets
        of this producer become committed (COMMIT) or are dropped (ABORT)."""
        by_group = self.pending_txn_offsets.get(producer_id)
        if not by_group:
            return
        for group_id in [g for g in by_group if partition_of(g) == partition]:
            offsets = by_group.pop(group_id)
            if not commit or not offsets:
                continue
            group = self.groups.get(group_id)
            if group is None:
                group = self.groups[group_id] = Group(group_id)
            await self._store_offsets(group, offsets)
        if not by_group:
            self.pending_txn_offsets.pop(producer_id, None)
