"""ISR changes a leader asks the controller for (Kafka's AlterPartition, KIP-497).

Shrink: every replica.lag.time.max.ms / 2 the leader drops the followers that have not caught
up to its log end offset for replica.lag.time.max.ms (ReplicaManager.maybeShrinkIsr). Expand: a
follower whose fetch reached the high watermark and this leader epoch's start rejoins
(Partition.maybeExpandIsr). One change in flight per partition; while an expansion is in
flight the high watermark waits for the replica it adds as well (Kafka's maximal ISR: once the
controller has written it, that replica may be elected). The controller's answer (new ISR and
partition epoch) is applied at once, and the state znode's watch confirms it; no answer and the
request is sent again, the change still pending.
"""

import asyncio
import time
from typing import Any, Callable

from fauxka.model.errors import ErrorCode, KafkaError

from ..controller_channel import ControllerChannel
from ..metadata_cache import MetadataCache
from .hosted import HostedPartitions
from .metrics import ReplicationMetrics
from .partition import Partition


_RETRY_BACKOFF_S = 0.1  # between AlterPartition attempts that got no answer


class IsrManager:
    def __init__(self, hosted: HostedPartitions, channel: ControllerChannel | None, cache: MetadataCache,
                 metrics: ReplicationMetrics, lag_max_ms: int, spawn: Callable[..., Any], log: Any):
        """`channel`: AlterPartition to the controller (None: the ISR never changes); `spawn(coro,
        name)`: a task the replica manager owns (cancelled when it stops)."""
        self._hosted = hosted
        self._channel = channel
        self._cache = cache
        self._metrics = metrics
        self._lag_max_ms = lag_max_ms  # replica.lag.time.max.ms
        self._spawn = spawn
        self._log = log

    def start(self) -> None:
        self._spawn(self._shrink_periodically(), "isr-shrink")

    async def stop(self) -> None:
        pass  # its tasks belong to the replica manager, which cancels them

    async def _shrink_periodically(self) -> None:
        while True:
            await asyncio.sleep(self._lag_max_ms / 2000)
            now_ms = time.time() * 1000
            for partition in list(self._hosted.partitions.values()):
                new_isr = partition.shrink_candidate(now_ms, self._lag_max_ms)
                if new_isr is not None:
                    self.request_change(partition, new_isr, "shrink")

    def request_change(self, partition: Partition, new_isr: list[int], reason: str) -> None:
        channel = self._channel
        if channel is None or partition.isr_change_pending:
            return
        partition.pending_isr = list(new_isr)  # the high watermark waits for an added replica from now
        self._spawn(self._alter(channel, partition, new_isr, reason), f"alter-isr-{partition.topic}")

    async def _alter(self, channel, partition: Partition, new_isr: list[int], reason: str) -> None:
        """Until the controller answers, as long as this leadership and this request stand: an
        AlterPartition that got no answer may have been written, so the change stays pending (the
        maximal ISR holds the high watermark) and is sent again (Kafka's AlterPartitionManager
        retries; Partition.handleAlterPartitionError keeps the pending state)."""
        assignment = self._cache.all_topics.get(partition.topic)
        topic_id = assignment.topic_id if assignment is not None else None
        epoch, leadership, pending = partition.leader_epoch, partition.leadership, partition.pending_isr

        def stands() -> bool:
            return (partition.is_leader and partition.leader_epoch == epoch and partition.leadership == leadership
                    and partition.pending_isr is pending)
        while True:
            try:
                result = await channel.alter_partition(partition.topic, topic_id, partition.index, epoch, new_isr,
                                                       partition.partition_epoch)
                break
            except (OSError, asyncio.TimeoutError, ConnectionError, KafkaError) as exc:  # no answer in time
                self._log.warning("alter partition failed", topic=partition.topic, partition=partition.index,
                                  error=repr(exc))
                if not stands():
                    return
                await asyncio.sleep(_RETRY_BACKOFF_S)
                if not stands():
                    return
            except Exception:  # never sent (a bug): nothing can have been written
                if stands():
                    partition.pending_isr = None
                raise
        if not stands():
            return  # a new leadership or partition state replaced the pending one meanwhile
        partition.pending_isr = None
        if result.error != ErrorCode.none:  # refused: not written, the committed ISR stands
            self._metrics.isr_changed("failed")  # Kafka's FailedIsrUpdatesPerSec
            self._log.info("alter partition refused", topic=partition.topic, partition=partition.index,
                           error=ErrorCode(result.error).name, wanted=new_isr)
            if partition.maybe_advance_high_watermark():
                self._hosted.high_watermark_moved(partition)
            return
        old = partition.isr
        partition.isr = list(result.isr)
        partition.partition_epoch = result.partition_epoch
        self._metrics.isr_changed("shrink" if len(result.isr) < len(old) else "expand")
        self._log.info("isr changed", topic=partition.topic, partition=partition.index, reason=reason,
                       old=old, new=partition.isr)
        partition.maybe_advance_high_watermark()
        self._hosted.high_watermark_moved(partition)
