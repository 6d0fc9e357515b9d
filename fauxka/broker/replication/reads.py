"""Fetch's and ListOffsets' side of the replica manager.

ReplicaManager.fetchMessages / DelayedFetch in small: read every partition asked for, and when
fewer than min_bytes came back and nothing failed, wait in the purgatory (woken by appends and
high-watermark moves on those partitions) until min_bytes are there or max_wait passes.
Consumers read up to the high watermark (read_uncommitted) or the last stable offset
(read_committed); followers (replica_id >= 0) up to the log end offset, and their fetch offset
tells the leader what they have (high watermark, ISR expansion). A consumer's Fetch v11+ carries
client metadata (its rack, the listener it came in on): it may read from a follower, up to the high
watermark that follower knows (KIP-392), and a leader with `replica.selector.class` set may answer
it with a preferred read replica instead of records (replica_selector.py). The response limit is
Kafka's: max_bytes over the whole response and partition_max_bytes per partition, except that
the first non-empty partition returns at least one whole batch (KIP-74).
"""

import time
from dataclasses import dataclass
from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.storage.errors import OffsetOutOfRange
from fauxka.storage.legacy_offsets import legacy_offsets_before

from ..purgatory import Purgatory
from .hosted import HostedPartitions
from .isr import IsrManager
from .metrics import ReplicationMetrics
from .replica_selector import NO_PREFERENCE, preferred_read_replica

READ_COMMITTED = 1
# what a leader answers a follower for a partition whose newer leadership it has not heard of yet
_LEADER_BEHIND = frozenset({ErrorCode.unknown_topic_or_partition, ErrorCode.not_leader_or_follower,
                            ErrorCode.unknown_leader_epoch})
EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -2, -1, -3, -4, -5


@dataclass(slots=True)
class FetchWant:
    topic: str
    index: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    log_start_offset: int = -1  # a follower's own log start offset


@dataclass(slots=True)
class FetchResult:
    error: ErrorCode = ErrorCode.none
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: bytes = b""
    diverging_epoch: tuple[int, int] | None = None  # (epoch, end offset) the follower must truncate to
    current_leader: tuple[int, int] | None = None  # (leader id, epoch) hint with NOT_LEADER / fencing errors
    aborted: list[tuple[int, int]] | None = None  # (producer id, first offset) for read_committed
    preferred_read_replica: int = NO_PREFERENCE  # KIP-392: read from this follower instead (no records)


@dataclass(frozen=True, slots=True)
class ClientMetadata:
    """What a consumer's Fetch v11+ tells about it (Kafka's ClientMetadata): it may read from followers."""
    rack: str
    listener: str


class Reader:
    def __init__(self, hosted: HostedPartitions, purgatory: Purgatory, metrics: ReplicationMetrics, isr: IsrManager,
                 config):
        """`purgatory`: the hosted partitions' (long-poll fetches wait there); `isr`: where a follower
        that caught up asks for the ISR's expansion."""
        self._hosted = hosted
        self._purgatory = purgatory
        self._metrics = metrics
        self._isr = isr
        self._selector = config["replica.selector.class"] or None
        # fauxka.test.break: the checker's proof that it catches read_committed showing aborted records
        self._hide_aborts = "read_committed_sees_aborted" in (config["fauxka.test.break"] or "").split(",")

    async def fetch(self, wants: list[FetchWant], replica_id: int, isolation_level: int, max_wait_ms: int,
                    min_bytes: int, max_bytes: int, hard_max_bytes: bool = False,
                    client: ClientMetadata | None = None) -> list[FetchResult]:
        """hard_max_bytes (Fetch v0-v2, Kafka's FetchParams.hardMaxBytesLimit): no "at least one
        batch" for the first partition; a batch larger than its partition's limit is not sent.
        `client`: a consumer's metadata (Fetch v11+), None for followers and older consumers, which
        read from the leader only (FetchParams.fetchOnlyLeader)."""
        follower = replica_id >= 0
        if follower:
            client = None
        if follower:
            self._record_follower_fetch(wants, replica_id)
        deadline = time.monotonic() + max(max_wait_ms, 0) / 1000

        first = [True]

        def attempt() -> list[FetchResult] | None:
            if not first[0] and not self._news(wants, follower, isolation_level, client):
                return None  # woken by a move that gives this fetch nothing to read: no read
            first[0] = False
            results = self._read_all(wants, follower, isolation_level, max_bytes, hard_max_bytes, client)
            # a preferred read replica is answered at once (ReplicaManager.fetchMessages)
            if (max_wait_ms <= 0 or sum(len(r.records) for r in results) >= min_bytes
                    or any((r.error != ErrorCode.none and not (follower and self._leading_soon(w, r)))
                           or r.diverging_epoch or r.preferred_read_replica != NO_PREFERENCE
                           for w, r in zip(wants, results))):
                return results
            return None

        results = await self._purgatory.wait({(w.topic, w.index) for w in wants}, attempt, deadline)
        if results is None:
            results = self._read_all(wants, follower, isolation_level, max_bytes, hard_max_bytes, client)
        metrics = self._metrics
        for want, result in zip(wants, results):
            metrics.fetch_request(want.topic, result.error)
            if result.records:
                metrics.read(want.topic, len(result.records), follower)
        return results

    def _leading_soon(self, want: FetchWant, result: FetchResult) -> bool:
        """Whether a follower's fetch names a partition this broker is to lead but does not yet: its
        LeaderAndIsr has reached the follower, not here (the controller tells them side by side). The
        fetch waits for it (the partition's state wakes the purgatory) rather than answering the error
        at once, which held the follower back replica.fetch.backoff.ms (1 s) from a new partition."""
        if result.error not in _LEADER_BEHIND:
            return False
        partition = self._hosted.partitions.get((want.topic, want.index))
        if partition is not None:
            return want.current_leader_epoch > partition.leader_epoch
        leader, epoch = self._hosted.current_leader(want.topic, want.index)
        return epoch < 0 or want.current_leader_epoch > epoch or leader == self._hosted.broker_id

    def _news(self, wants: list[FetchWant], follower: bool, isolation_level: int,
              client: ClientMetadata | None) -> bool:
        """Whether a read could now answer more than the last one (DelayedFetch.tryComplete looks
        at offsets, not at the log): records past a fetch offset, or a partition that would answer
        an error (leadership or epoch moved, the offset out of range). A parked fetch is woken by
        every append and high-watermark move on its partitions; most give it nothing to read."""
        partitions = self._hosted.partitions
        for want in wants:
            partition = partitions.get((want.topic, want.index))
            if partition is None or (not partition.is_leader and client is None) or (
                    want.current_leader_epoch >= 0 and want.current_leader_epoch != partition.leader_epoch):
                return True
            log = partition.log
            offset = want.fetch_offset
            if not log.log_start_offset <= offset <= log.log_end_offset:
                return True
            if follower:
                bound = log.log_end_offset
            else:
                bound = log.last_stable_offset if isolation_level == READ_COMMITTED else log.high_watermark
            if offset < bound:
                return True
        return False

    def _record_follower_fetch(self, wants: list[FetchWant], replica_id: int) -> None:
        hosted = self._hosted
        now_ms = time.time() * 1000
        for want in wants:
            partition = hosted.partitions.get((want.topic, want.index))
            if partition is None or not partition.is_leader or replica_id not in partition.replicas:
                continue
            if want.current_leader_epoch >= 0 and want.current_leader_epoch != partition.leader_epoch:
                continue
            start_moved = partition.update_follower(replica_id, want.fetch_offset, now_ms, want.log_start_offset)
            # acks=all and DeleteRecords waiters look again only when the high or low watermark may
            # have moved (Partition.updateFollowerFetchState): a follower's fetch names every
            # partition of its session, and waking them all woke every long poll parked on them
            if partition.maybe_advance_high_watermark() or start_moved:
                hosted.high_watermark_moved(partition)
            new_isr = partition.expansion_candidate(replica_id)
            if new_isr is not None:
                self._isr.request_change(partition, new_isr, "expand")

    def _read_all(self, wants: list[FetchWant], follower: bool, isolation_level: int,
                  max_bytes: int, hard_max_bytes: bool, client: ClientMetadata | None) -> list[FetchResult]:
        results, used = [], 0
        # the brokers a consumer may be sent to, read once for the whole fetch (a selector is set)
        racks = self._hosted.listener_racks(client.listener) if client is not None and self._selector else None
        for want in wants:
            limit = min(want.max_bytes, max(max_bytes - used, 0))
            result = self._read_one(want, follower, isolation_level, limit, used == 0 and not hard_max_bytes, client,
                                    racks)
            used += len(result.records)
            results.append(result)
        return results

    def _read_one(self, want: FetchWant, follower: bool, isolation_level: int, limit: int,
                  min_one_batch: bool, client: ClientMetadata | None,
                  racks: dict[int, str | None] | None) -> FetchResult:
        """`racks`: broker id -> rack of the brokers a preferred read replica may be (None: no selector)."""
        hosted = self._hosted
        try:
            partition = hosted.local_partition(want.topic, want.index, want.current_leader_epoch,
                                               require_leader=client is None)
        except KafkaError as exc:
            return FetchResult(error=exc.code, current_leader=hosted.current_leader(want.topic, want.index))
        log = partition.log
        result = FetchResult(high_watermark=log.high_watermark, last_stable_offset=log.last_stable_offset,
                             log_start_offset=log.log_start_offset)
        if racks is not None and partition.is_leader:
            result.preferred_read_replica = preferred_read_replica(
                partition, client.rack, want.fetch_offset, time.time() * 1000, racks)
            if result.preferred_read_replica != NO_PREFERENCE:
                return result  # the consumer goes there: no read here
        if want.last_fetched_epoch >= 0:  # Fetch v12+: does the fetcher's history diverge from ours?
            epoch, end = log.end_offset_for_epoch(want.last_fetched_epoch)
            if epoch >= 0 and (epoch < want.last_fetched_epoch or end < want.fetch_offset):
                result.diverging_epoch = (epoch, end)
                return result
        if follower:
            bound = log.log_end_offset
        else:
            bound = log.last_stable_offset if isolation_level == READ_COMMITTED else log.high_watermark
        offset = want.fetch_offset
        if not log.log_start_offset <= offset <= log.log_end_offset:
            result.error = ErrorCode.offset_out_of_range
            return result
        if offset >= bound or (limit <= 0 and not min_one_batch):
            return result
        try:
            result.records = log.read(offset, limit, bound, min_one_batch)
            if isolation_level == READ_COMMITTED and not follower and result.records:
                result.aborted = [] if self._hide_aborts else log.aborted_transactions(offset, bound)  # the transaction index
        except OffsetOutOfRange:
            result.error = ErrorCode.offset_out_of_range
        except KafkaError as exc:
            result.error = exc.code
        return result

    # --- ListOffsets ---------------------------------------------------------------------------------

    def offset_for(self, topic: str, index: int, timestamp: int, isolation_level: int | None,
                   current_leader_epoch: int) -> tuple[int, int, int]:
        """(timestamp, offset, leader epoch) as ReplicaManager.fetchOffsetForTimestamp answers a
        consumer (`isolation_level`; None: a replica's debugging request, up to the log end offset);
        raises KafkaError (not the leader, fenced epoch, OFFSET_NOT_AVAILABLE for a consumer while a
        new leader's high watermark lags the start of its epoch)."""
        partition = self._hosted.leader_partition(topic, index, current_leader_epoch)
        log = partition.log
        if isolation_level is None:
            fetchable = log.log_end_offset
        else:
            fetchable = log.last_stable_offset if isolation_level == READ_COMMITTED else log.high_watermark
        lagging = isolation_level is not None and partition.offsets_not_available()
        latest_epoch = log.latest_epoch()
        if timestamp in (EARLIEST, EARLIEST_LOCAL):
            return -1, log.log_start_offset, self._epoch_at(log, log.log_start_offset)
        if timestamp == LATEST:
            if lagging:
                raise KafkaError(ErrorCode.offset_not_available)
            return -1, fetchable, latest_epoch if latest_epoch is not None else -1
        if timestamp == LATEST_TIERED:
            return -1, -1, -1
        found = log.offset_for_timestamp(timestamp)
        if found is None or found[0] >= fetchable:
            if lagging:
                raise KafkaError(ErrorCode.offset_not_available)
            return -1, -1, -1
        offset, ts, epoch = found
        return ts, offset, epoch

    def legacy_offsets(self, topic: str, index: int, timestamp: int, max_num_offsets: int,
                       from_consumer: bool) -> list[int]:
        """ListOffsets v0 (Kafka 3.9 `Partition.legacyFetchOffsetsForTimestamp`): the segment
        boundary offsets before `timestamp`; a consumer's list starts at the high watermark when
        offsets past it were found. Only the leader answers; raises KafkaError."""
        log = self._hosted.leader_partition(topic, index, -1).log
        offsets = legacy_offsets_before(log, timestamp, max_num_offsets, int(time.time() * 1000))
        high_watermark = log.high_watermark
        if from_consumer and any(o > high_watermark for o in offsets):
            offsets = [high_watermark] + [o for o in offsets if o <= high_watermark]
        return offsets

    @staticmethod
    def _epoch_at(log, offset: int) -> int:
        """The leader epoch of the batch at `offset`: the smallest epoch whose end offset lies past it."""
        latest = log.latest_epoch()
        if latest is None:
            return -1
        epoch = latest
        while epoch >= 0:
            found, end = log.end_offset_for_epoch(epoch - 1) if epoch > 0 else (-1, -1)
            if found < 0 or end <= offset:
                return epoch
            epoch = found
        return -1
