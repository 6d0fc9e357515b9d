"""Produce's side of the replica manager: append as leader, then wait for the acks asked for.

ReplicaManager.appendRecords and DelayedProduce in small. acks=0 and acks=1 answer once the
leader's log has the batch; acks=-1 first refuses with NOT_ENOUGH_REPLICAS when the ISR is
smaller than min.insync.replicas (Partition.appendRecordsToLeader), then waits in the purgatory
until the high watermark passes the batch, answering NOT_ENOUGH_REPLICAS_AFTER_APPEND when the
ISR has shrunk below min.insync.replicas by then, and REQUEST_TIMED_OUT at the request's timeout.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.storage.batch import magic_of

from ..purgatory import Purgatory
from .hosted import HostedPartitions
from .metrics import ReplicationMetrics
from .partition import Partition


@dataclass(slots=True)
class AppendResult:
    error: ErrorCode = ErrorCode.none
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    record_errors: list[tuple[int, str | None]] = field(default_factory=list)
    error_message: str | None = None
    last_offset: int = -1
    leader_epoch: int = -1
    leadership: int = 0  # Partition.leadership when appended


class Appender:
    def __init__(self, hosted: HostedPartitions, purgatory: Purgatory, metrics: ReplicationMetrics, config):
        """`purgatory`: the hosted partitions' (acks=all waits there, woken by their moves)."""
        self._hosted = hosted
        self._purgatory = purgatory
        self._metrics = metrics
        # fauxka.test.break: the checker's proof that it catches a broker losing acknowledged records
        self._ack_at_once = "ack_before_replication" in (config["fauxka.test.break"] or "").split(",")

    async def append_records(self, entries: dict[tuple[str, int], bytes], acks: int,
                             timeout_ms: int, origin: str = "client",
                             on_appended: Callable[[dict], None] | None = None,
                             ) -> dict[tuple[str, int], AppendResult]:
        """Append each partition's records; with acks=-1 wait (at most `timeout_ms`) for the ISR.
        origin "coordinator": transaction markers (WriteTxnMarkers) may be control batches.
        `on_appended`: as append_local's."""
        results = self.append_local(entries, acks, origin, on_appended)
        if acks == -1 and not self._ack_at_once:
            await self.wait_for_acks(results, timeout_ms)
        return results

    def append_local(self, entries: dict[tuple[str, int], bytes], acks: int, origin: str = "client",
                     on_appended: Callable[[dict], None] | None = None) -> dict[tuple[str, int], AppendResult]:
        """The leader's half of append_records, at once: each partition's batch in the local log
        (Partition.appendRecordsToLeader); acks=all's wait is `wait_for_acks`, which callers that
        pipeline (the group coordinator) run later, in append order.
        `on_appended(results)` runs once the leader's log has them, before the followers' and
        consumers' long polls are woken (a coordinator applies its own record then, as the
        KRaft-era CoordinatorRuntime does, answering only once it is replicated; whatever it
        appends next on being woken goes out in the same follower fetch; an acks=all Produce lets
        its connection read on then: server.py)."""
        results: dict[tuple[str, int], AppendResult] = {}
        for key, records in entries.items():
            results[key] = self._append(key, records, acks, origin)
        if on_appended is not None:
            on_appended(results)
        hosted = self._hosted
        for key, result in results.items():
            partition = hosted.partitions.get(key) if result.error == ErrorCode.none else None
            if partition is not None:
                hosted.high_watermark_moved(partition)  # consumers' and followers' long polls see the append
        return results

    async def wait_for_acks(self, results: dict[tuple[str, int], AppendResult], timeout_ms: int) -> None:
        """DelayedProduce: wait (at most `timeout_ms`) until the high watermark passed every
        appended batch, then set each result's error (NONE, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT)."""
        waiting = {key: r for key, r in results.items() if r.error == ErrorCode.none}
        if not waiting:
            return
        deadline = time.monotonic() + max(timeout_ms, 0) / 1000
        await self._purgatory.wait(waiting.keys(), lambda: all(self._acked(k, r) is not None for k, r in waiting.items()),
                                   deadline)
        for key, result in waiting.items():
            outcome = self._acked(key, result)
            result.error = ErrorCode.request_timed_out if outcome is None else outcome
            if result.error != ErrorCode.none:
                result.base_offset = -1 if result.error != ErrorCode.not_enough_replicas_after_append else result.base_offset

    def _append(self, key: tuple[str, int], records: bytes | None, acks: int, origin: str = "client") -> AppendResult:
        hosted = self._hosted
        try:
            partition: Partition = hosted.leader_partition(*key)
            info = partition.append_records_to_leader(records or b"", acks, int(time.time() * 1000), origin)
        except KafkaError as exc:
            self._metrics.produce_request(key[0], exc.code, len(records or b""), getattr(exc, "invalid", None))
            return AppendResult(error=exc.code, error_message=exc.message,
                                record_errors=list(getattr(exc, "record_errors", None) or ()))
        self._metrics.produce_request(key[0], ErrorCode.none)
        if not info.duplicate:
            self._metrics.appended(key[0], len(records or b""), info.record_count)
            if magic_of(records) < 2:  # a magic 0/1 message set, converted to v2 by storage
                self._metrics.converted(key[0], "produce", info.record_count)
        partition.maybe_advance_high_watermark()  # a single-replica ISR: the HW is the end offset
        return AppendResult(base_offset=info.first_offset, log_append_time=info.log_append_time,
                            log_start_offset=info.log_start_offset, last_offset=info.last_offset,
                            leader_epoch=partition.leader_epoch, leadership=partition.leadership)

    def _acked(self, key: tuple[str, int], result: AppendResult) -> ErrorCode | None:
        """ErrorCode.none once the high watermark passed the batch; an error when it never will; None: wait.
        Kafka's Partition.checkEnoughReplicasReachOffset: NOT_LEADER_OR_FOLLOWER only once this broker
        no longer leads. A new leader epoch while it still leads (the controller dropping a dead
        follower from the ISR bumps it) keeps the wait: the batch is appended, and a client told
        NOT_LEADER takes it for not persisted (librdkafka) although a new leader may have it."""
        partition = self._hosted.partitions.get(key)
        if partition is None or not partition.is_leader or partition.leadership != result.leadership:
            return ErrorCode.not_leader_or_follower
        if partition.high_watermark > result.last_offset:
            if partition.under_min_isr():
                return ErrorCode.not_enough_replicas_after_append
            return ErrorCode.none
        return None
