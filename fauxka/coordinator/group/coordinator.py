"""The group coordinator: membership (membership.py, rebalance.py), committed offsets, the admin apis
and the replay of a __consumer_offsets partition (Kafka 3.x GroupCoordinator + GroupMetadataManager).

Offsets (handleCommitOffsets / doCommitOffsets): a simple consumer (generation < 0) commits to an
Empty or unknown group; a member commits with its current generation; CompletingRebalance refuses
with REBALANCE_IN_PROGRESS. Each commit is an OffsetCommitKey/Value record appended with acks=all
before it becomes visible. Expiry (cleanupGroupMetadata) appends tombstones.
"""

from dataclasses import dataclass

from fauxka.model.errors import ErrorCode

from ..runtime import CoordinatorRuntime
from .commit_check import offset_commit_error
from .membership import GroupMembership
from .rebalance import now_ms, store_error
from .records import (GroupKey, OffsetKey, OffsetValue, decode_group_value, decode_key, decode_offset_value,
                      encode_key, encode_offset_value)
from .state import CommittedOffset, Group, GroupState
from .txn_offsets import TxnOffsets

TopicPartition = tuple[str, int]


@dataclass(slots=True)
class OffsetRequest:
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""
    expire_timestamp: int = -1
    commit_timestamp: int = -1  # OffsetCommit v1's own commit time (-1: now), as Kafka 3.9 keeps it


@dataclass(slots=True)
class GroupDescription:
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: list[tuple[str, str | None, str, str, bytes, bytes]]  # id, instance, client, host, metadata, assignment


class GroupCoordinator(TxnOffsets, GroupMembership):
    """The groups of the __consumer_offsets partitions this broker leads, over their runtime."""

    runtime: CoordinatorRuntime  # set by RebalanceCore.__init__ (rebalance.py)

    # --- whose groups are coordinated here (GroupCoordinator.validateGroupStatus) -------------------
    def owns(self, group_id: str) -> bool:
        """fauxka/broker/dispatch.py's check: this broker leads (or loads) the group's partition."""
        return self.runtime.owns(group_id)

    def status(self, group_id: str) -> ErrorCode:
        """NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or NONE for the group."""
        return self.runtime.status(group_id)

    def partition_of(self, group_id: str) -> int:
        return self.runtime.partition_of(group_id)

    def loading(self) -> bool:
        """Some partition is still being loaded (a listing answers COORDINATOR_LOAD_IN_PROGRESS)."""
        return self.runtime.loading()

    # --- OffsetCommit -------------------------------------------------------------------------------
    async def commit_offsets(self, group_id: str, member_id: str, instance_id: str | None, generation: int,
                             offsets: dict[TopicPartition, OffsetRequest]) -> dict[TopicPartition, ErrorCode]:
        def all_(code):
            return {tp: code for tp in offsets}
        if not group_id:
            return all_(ErrorCode.invalid_group_id)
        group = self.groups.get(group_id)
        if group is None:
            if generation >= 0:
                return all_(ErrorCode.illegal_generation)
            group = self.groups[group_id] = Group(group_id, current_state_timestamp=now_ms())
        else:
            # GroupCoordinator.validateOffsetCommit, then the group's state (doCommitOffsets): the
            # member and its generation first, so a member a generation behind during
            # CompletingRebalance is told ILLEGAL_GENERATION; only one with the new generation
            # (it has the JoinGroup answer, not yet the SyncGroup one) REBALANCE_IN_PROGRESS
            error = offset_commit_error(group, member_id, instance_id, generation, transactional=False)
            if error is not None:
                return all_(error)
            if group.is_(GroupState.COMPLETING_REBALANCE):
                return all_(ErrorCode.rebalance_in_progress)
            if not group.is_(GroupState.EMPTY):
                self._schedule_heartbeat(group, group.members[member_id])
        return await self._store_offsets(group, offsets)

    async def _store_offsets(self, group: Group, offsets: dict[TopicPartition, OffsetRequest]):
        now = now_ms()
        results: dict[TopicPartition, ErrorCode] = {}
        accepted: dict[TopicPartition, CommittedOffset] = {}
        for tp, req in offsets.items():
            metadata = req.metadata or ""
            if len(metadata.encode()) > self.config.offset_metadata_max_bytes:
                results[tp] = ErrorCode.offset_metadata_too_large
            else:
                accepted[tp] = CommittedOffset(req.offset, req.leader_epoch, metadata,
                                               now if req.commit_timestamp == -1 else req.commit_timestamp,
                                               req.expire_timestamp)
        if accepted:
            records = [(encode_key(OffsetKey(group.group_id, t, p)),
                        encode_offset_value(OffsetValue(c.offset, c.leader_epoch, c.metadata, c.commit_timestamp,
                                                        c.expire_timestamp)))
                       for (t, p), c in accepted.items()]
            group.committing.update(accepted.keys())
            try:
                code = await self.runtime.write_records(group.group_id, records)
            finally:
                group.committing.subtract(accepted.keys())
                for tp in accepted:
                    if group.committing[tp] <= 0:
                        del group.committing[tp]
            code = (ErrorCode.invalid_commit_offset_size if code in (
                ErrorCode.message_too_large, ErrorCode.record_list_too_large, ErrorCode.invalid_fetch_size)
                else store_error(code))
            if code == ErrorCode.none and self.groups.get(group.group_id) is group:
                group.offsets.update(accepted)
                if self.metrics is not None:
                    self.metrics.commits(len(accepted))
            results.update({tp: code for tp in accepted})
        return results

    # --- OffsetFetch --------------------------------------------------------------------------------
    def unstable_partitions(self, group_id: str) -> set[TopicPartition]:
        """hasPendingOffsetCommitsForTopicPartition: a plain commit being appended or a transactional
        one waiting for its marker (OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT)."""
        group = self.groups.get(group_id)
        in_flight = set(group.committing) if group is not None else set()
        return in_flight | self.pending_txn_partitions(group_id)

    def fetch_offsets(self, group_id: str, partitions: list[TopicPartition] | None
                      ) -> dict[TopicPartition, CommittedOffset | None]:
        """Committed offsets (None: nothing committed); `partitions` None: every one the group has."""
        group = self.groups.get(group_id)
        offsets = group.offsets if group is not None and not group.is_(GroupState.DEAD) else {}
        if partitions is None:
            return dict(offsets)
        return {tp: offsets.get(tp) for tp in partitions}

    # --- DescribeGroups, ListGroups, DeleteGroups, OffsetDelete ---------------------------------------
    def describe(self, group_id: str) -> GroupDescription:
        group = self.groups.get(group_id)
        if group is None:
            return GroupDescription(group_id, GroupState.DEAD.value, "", "", [])
        stable = group.is_(GroupState.STABLE)
        members = [(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                    m.metadata(group.protocol or "") if stable else b"", m.assignment if stable else b"")
                   for m in group.members.values()]
        return GroupDescription(group_id, group.state.value, group.protocol_type or "",
                                (group.protocol or "") if stable else "", members)

    def list_groups(self, states: set[str] | None = None) -> list[tuple[str, str, str]]:
        """(group id, protocol type, state) of every group, filtered by state names (ListGroups v4)."""
        wanted = {s.lower() for s in states} if states else None
        return [(g.group_id, g.protocol_type or "", g.state.value) for g in self.groups.values()
                if not g.is_(GroupState.DEAD) and (wanted is None or g.state.value.lower() in wanted)]

    async def delete_groups(self, group_ids: list[str]) -> dict[str, ErrorCode]:
        results = {}
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if not group_id:
                results[group_id] = ErrorCode.invalid_group_id
            elif group is None or group.is_(GroupState.DEAD):
                results[group_id] = ErrorCode.group_id_not_found
            elif not group.is_(GroupState.EMPTY):
                results[group_id] = ErrorCode.non_empty_group
            else:
                records = [(encode_key(OffsetKey(group_id, t, p)), None) for t, p in group.offsets]
                records.append((encode_key(GroupKey(group_id)), None))
                code = store_error(await self.runtime.write_records(group_id, records))
                if code == ErrorCode.none and self.groups.get(group_id) is group:
                    group.transition(GroupState.DEAD, now_ms())
                    del self.groups[group_id]
                results[group_id] = code
        return results

    async def delete_offsets(self, group_id: str, partitions: list[TopicPartition]
                             ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """OffsetDelete (KIP-496): refuses partitions of topics a consumer group still subscribes to."""
        group = self.groups.get(group_id)
        if not group_id:
            return ErrorCode.invalid_group_id, {}
        if group is None or group.is_(GroupState.DEAD):
            return ErrorCode.group_id_not_found, {}
        subscribed: set[str] = set()
        if not group.is_(GroupState.EMPTY):
            topics = group.subscribed_topics()
            if topics is None:
                return ErrorCode.non_empty_group, {}
            subscribed = topics
        results = {tp: ErrorCode.group_subscribed_to_topic for tp in partitions if tp[0] in subscribed}
        doomed = [tp for tp in partitions if tp[0] not in subscribed]
        present = [tp for tp in doomed if tp in group.offsets]
        code = ErrorCode.none
        if present:
            code = store_error(await self.runtime.write_records(
                group_id, [(encode_key(OffsetKey(group_id, t, p)), None) for t, p in present]))
            if code == ErrorCode.none:
                for tp in present:
                    group.offsets.pop(tp, None)
        results.update({tp: code for tp in doomed})
        return ErrorCode.none, results

    # --- retention ----------------------------------------------------------------------------------
    async def expire_offsets(self, now: int | None = None) -> int:
        """cleanupGroupMetadata: tombstones for expired offsets; an Empty group left with none (and none
        pending in a transaction) dies."""
        now = now_ms() if now is None else now
        retention = self.config.offsets_retention_ms
        removed = 0
        # GroupMetadata.hasOffsets counts pending transactional offsets: such a group stays
        pending = {g for by_group in self.pending_txn_offsets.values() for g in by_group}
        for group in list(self.groups.values()):
            expired = []
            subscribed = group.subscribed_topics() if group.is_(GroupState.STABLE) else None
            for tp, c in group.offsets.items():
                if c.expire_timestamp != -1:
                    if now >= c.expire_timestamp:
                        expired.append(tp)
                elif group.is_(GroupState.EMPTY):
                    base = group.current_state_timestamp if group.protocol_type else c.commit_timestamp
                    if (base if base is not None else c.commit_timestamp) + retention <= now:
                        expired.append(tp)
                elif subscribed is not None and tp[0] not in subscribed and c.commit_timestamp + retention <= now:
                    expired.append(tp)
            dies = (group.is_(GroupState.EMPTY) and len(expired) == len(group.offsets)
                    and group.group_id not in pending)
            if not expired and not dies:
                continue
            records = [(encode_key(OffsetKey(group.group_id, t, p)), None) for t, p in expired]
            if dies:
                records.append((encode_key(GroupKey(group.group_id)), None))
            if store_error(await self.runtime.write_records(group.group_id, records)) != ErrorCode.none:
                continue
            for tp in expired:
                group.offsets.pop(tp, None)
            removed += len(expired)
            if dies and self.groups.get(group.group_id) is group and group.is_(GroupState.EMPTY):
                group.transition(GroupState.DEAD, now)
                del self.groups[group.group_id]
        return removed

    async def remove_topic_offsets(self, topic: str) -> int:
        """A deleted topic's offsets go, with tombstones (GroupMetadataManager.handleDeletedPartitions)."""
        removed = 0
        for group in list(self.groups.values()):
            doomed = [tp for tp in group.offsets if tp[0] == topic]
            if not doomed:
                continue
            code = await self.runtime.write_records(group.group_id, [(encode_key(OffsetKey(group.group_id, t, p)), None)
                                                                 for t, p in doomed])
            if code == ErrorCode.none:
                for tp in doomed:
                    group.offsets.pop(tp, None)
                removed += len(doomed)
        return removed

    # --- loading ------------------------------------------------------------------------------------
    def replay(self, key: bytes | None, value: bytes | None, producer_id: int = -1) -> None:
        """One record of the partition being loaded (GroupMetadataManager.doLoadGroupsAndOffsets);
        the last record of a key wins, a tombstone removes; a transactional offset waits for its
        producer's marker (txn_offsets.py)."""
        if key is None:
            return
        parsed = decode_key(key)
        if isinstance(parsed, OffsetKey) and producer_id != -1 and value is not None:
            v = decode_offset_value(value)
            self.replay_txn_offset(producer_id, parsed, CommittedOffset(
                v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, v.expire_timestamp))
        elif isinstance(parsed, OffsetKey):
            group = self.groups.get(parsed.group)
            if value is None:
                if group is not None:
                    group.offsets.pop((parsed.topic, parsed.partition), None)
                return
            if group is None:
                group = self.groups[parsed.group] = Group(parsed.group)
            v = decode_offset_value(value)
            group.offsets[(parsed.topic, parsed.partition)] = CommittedOffset(
                v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, v.expire_timestamp)
        elif isinstance(parsed, GroupKey):
            old = self.groups.get(parsed.group)
            if value is None:
                if old is not None and old.offsets:
                    old.members.clear()
                    old.static_members.clear()
                    old.state = GroupState.EMPTY
                else:
                    self.groups.pop(parsed.group, None)
                return
            group = Group.from_record(parsed.group, decode_group_value(value))
            if old is not None:
                group.offsets = old.offsets
            self.groups[parsed.group] = group

    # --- the runtime's shard: a partition's records replayed, then loaded, or unloaded ---------------
    def replay_record(self, partition: int, key: bytes | None, value: bytes | None, producer_id: int = -1,
                      marker: bool | None = None) -> None:
        if marker is not None:
            self._complete_txn(producer_id, marker, partition)
        else:
            self.replay(key, value, producer_id)

    def txn_marker_written(self, producer_id: int, commit: bool, partition: int) -> None:
        """WriteTxnMarkers wrote the producer's marker to the partition (Kafka's
        scheduleHandleTxnCompletion): its pending transactional offsets complete now. Not while the
        partition loads: the replay reads to the live log end, so it meets the marker after the
        offsets it completes (Kafka runs the completion after the load, on the same scheduler)."""
        if self.runtime.active(partition):
            self._complete_txn(producer_id, commit, partition)

    def _complete_txn(self, producer_id: int, commit: bool, partition: int) -> None:
        self.complete_txn_offsets(producer_id, commit, lambda g: self.partition_of(g) == partition)

    def partition_unloaded(self, partition: int) -> None:
        keep = lambda group_id: self.partition_of(group_id) != partition  # noqa: E731
        self.unload(keep)
        self.unload_txn_offsets(keep)

    def partition_loaded(self, partition: int) -> dict:
        loaded = [g for g in self.groups if self.partition_of(g) == partition]
        self.loaded(loaded)
        return {"groups": len(loaded)}

    def loaded(self, group_ids: list[str]) -> None:
        """After a replay: every loaded member's session starts now (Kafka schedules them on load)."""
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if group is None:
                continue
            if not group.members and not group.offsets:
                del self.groups[group_id]
                continue
            for member in group.members.values():
                self._schedule_heartbeat(group, member)
