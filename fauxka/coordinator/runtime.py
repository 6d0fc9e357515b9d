"""The coordinator runtime (Kafka's CoordinatorRuntime): one class under both coordinators, one
instance per internal topic (__consumer_offsets for the group coordinator, __transaction_state
for the transaction coordinator), over the broker's one PartitionWriter (partition_writer.py).

- `became_leader(p, epoch)`: the partition is LOADING (COORDINATOR_LOAD_IN_PROGRESS) while its log
  is replayed from the log start to the log end (the shard's `replay_record(p, *record)` per record,
  yielding to other work every 1000 records), then the shard's `partition_loaded(p)` runs and it
  is ACTIVE (scheduleLoadOperation).
- `lost_leadership(p)`: the load is cancelled and the shard's `partition_unloaded(p)` forgets its
  state: NOT_COORDINATOR (scheduleUnloadOperation).
- writes check that this broker still leads the partition at the epoch it loaded (else
  NOT_LEADER_OR_FOLLOWER, which the coordinators answer NOT_COORDINATOR): `write_records` batches
  the records of one turn of the event loop (batches.py), `write_batch` appends a batch of its own
  (a transactional one, or one whose caller acts as soon as the leader's log has it).
- `every(ms, work)`: the coordinator's periodic housekeeping; the runtime owns these tasks, its
  loads and its batches' completers, and `close()` cancels them all.
"""

import asyncio
import enum
import time
from collections import deque
from typing import Awaitable, Callable, Protocol

from fauxka.model.errors import ErrorCode

from .batches import AppendBatches
from .partitioner import partition_for
from .partition_writer import PartitionWriter


class Load(enum.Enum):
    LOADING = "loading"
    ACTIVE = "active"


class CoordinatorShard(Protocol):
    """What a coordinator gives its runtime (Kafka's CoordinatorShard / CoordinatorPlayback)."""

    def replay_record(self, partition: int, key: bytes | None, value: bytes | None, producer_id: int = -1,
                      marker: bool | None = None) -> None: ...

    def partition_loaded(self, partition: int) -> dict: ...

    def partition_unloaded(self, partition: int) -> None: ...


class CoordinatorRuntime:
    def __init__(self, topic: str, writer: PartitionWriter, num_partitions: int, *, append_timeout_ms: int,
                 log=None):
        """`append_timeout_ms`: how long an append waits for its replication unless told otherwise
        (offsets.commit.timeout.ms for the groups, request.timeout.ms for the transactions)."""
        self.topic = topic
        self.writer = writer
        self.num_partitions = num_partitions  # follows the topic's assignment (broker/coordination/leadership.py)
        self.append_timeout_ms = append_timeout_ms
        self.partitions: dict[int, tuple[Load, int]] = {}  # partition -> (state, leader epoch)
        self.recent_loads: deque[tuple[float, float]] = deque(maxlen=64)  # (monotonic end, ms) for metrics
        self._shard: CoordinatorShard | None = None
        self._log = log
        self._loads: dict[int, asyncio.Task] = {}
        self._periodic: list[asyncio.Task] = []
        self._batches = AppendBatches(writer, topic, self.leads, append_timeout_ms, log)

    def serve(self, shard: CoordinatorShard) -> None:
        """The coordinator whose state this runtime loads and unloads (set once, before any load)."""
        self._shard = shard

    # --- which keys are coordinated here ---------------------------------------------------------------
    def partition_of(self, key: str) -> int:
        return partition_for(key, self.num_partitions)

    def owns(self, key: str) -> bool:
        """fauxka/broker/dispatch.py's check: True while this broker leads (or loads) the key's partition."""
        return self.partition_of(key) in self.partitions

    def status(self, key: str) -> ErrorCode:
        """NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or NONE for the key's partition."""
        state = self.partitions.get(self.partition_of(key))
        if state is None:
            return ErrorCode.not_coordinator
        return ErrorCode.coordinator_load_in_progress if state[0] is Load.LOADING else ErrorCode.none

    def loading(self) -> bool:
        """Some partition is still LOADING (a listing answers COORDINATOR_LOAD_IN_PROGRESS)."""
        return any(state is Load.LOADING for state, _ in list(self.partitions.values()))

    def active(self, partition: int) -> bool:
        state = self.partitions.get(partition)
        return state is not None and state[0] is Load.ACTIVE

    def leads(self, partition: int) -> bool:
        """This broker still leads the partition at the epoch it loaded (appends check it)."""
        state = self.partitions.get(partition)
        return state is not None and self.writer.leader_epoch(self.topic, partition) == state[1]

    def coordinator_epoch(self, key: str) -> int:
        """The leader epoch the key's partition was loaded at (-1: not loaded here)."""
        state = self.partitions.get(self.partition_of(key))
        return state[1] if state is not None else -1

    # --- writes ----------------------------------------------------------------------------------------
    async def write_records(self, key: str, records: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Append to the key's partition with acks=all, in the batch of this turn of the event loop."""
        partition = self.partition_of(key)
        if not self.leads(partition):
            return ErrorCode.not_leader_or_follower
        return await self._batches.enqueue(partition, records)

    async def write_batch(self, key: str, records: list[tuple[bytes, bytes | None]], *,
                          producer: tuple[int, int] | None = None, appended: Callable[[], None] | None = None,
                          timeout_ms: int | None = None) -> ErrorCode:
        """Append the records as a batch of their own with acks=all (ErrorCode.none: replicated,
        REQUEST_TIMED_OUT past `timeout_ms`, append_timeout_ms when None). `producer` (id, epoch): a
        transactional batch of that producer; `appended()` runs as soon as the leader's log has it."""
        partition = self.partition_of(key)
        if not self.leads(partition):
            return ErrorCode.not_leader_or_follower
        timeout_ms = self.append_timeout_ms if timeout_ms is None else timeout_ms
        return await self.writer.append_batch(self.topic, partition, records, timeout_ms, producer, appended)

    # --- leadership ------------------------------------------------------------------------------------
    def became_leader(self, partition: int, epoch: int) -> None:
        current = self.partitions.get(partition)
        if current is not None and current[1] == epoch:
            return
        if current is not None:
            self._forget(partition)
        self.partitions[partition] = (Load.LOADING, epoch)
        self._loads[partition] = asyncio.get_running_loop().create_task(
            self._load(partition, epoch), name=f"load-{self.topic}-{partition}")

    def lost_leadership(self, partition: int) -> None:
        if partition in self.partitions:
            self._forget(partition)
            if self._log is not None:
                self._log.info("unloaded coordinator partition", topic=self.topic, partition=partition)

    def _forget(self, partition: int) -> None:
        del self.partitions[partition]
        task = self._loads.pop(partition, None)
        if task is not None:
            task.cancel()
        self._shard.partition_unloaded(partition)

    async def _load(self, partition: int, epoch: int) -> None:
        started = time.monotonic()
        count = 0
        try:
            await asyncio.sleep(0)  # let the replica manager finish becoming leader
            for record in self.writer.read_records(self.topic, partition):
                self._shard.replay_record(partition, *record)
                count += 1
                if count % 1000 == 0:
                    await asyncio.sleep(0)  # other partitions' requests are not held up
                    if self.partitions.get(partition) != (Load.LOADING, epoch):
                        return
            details = self._shard.partition_loaded(partition)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a damaged log: stay unloaded rather than answer wrongly
            if self._log is not None:
                self._log.exception("loading coordinator partition failed", topic=self.topic, partition=partition,
                                    error=repr(exc))
            self.partitions.pop(partition, None)
            return
        finally:
            self._loads.pop(partition, None)
        if self.partitions.get(partition) == (Load.LOADING, epoch):
            self.partitions[partition] = (Load.ACTIVE, epoch)
            elapsed = (time.monotonic() - started) * 1000
            self.recent_loads.append((time.monotonic(), elapsed))
            if self._log is not None:
                self._log.info("loaded coordinator partition", topic=self.topic, partition=partition, epoch=epoch,
                               records=count, ms=round(elapsed, 1), **details)

    # --- life cycle ------------------------------------------------------------------------------------
    def every(self, interval_ms: int, work: Callable[[], Awaitable], name: str, failed: str) -> None:
        """Run `work()` every `interval_ms` until close(); a failure is logged as `failed` and the
        next pass tries again."""
        self._periodic.append(asyncio.get_running_loop().create_task(self._every(interval_ms, work, failed), name=name))

    async def _every(self, interval_ms: int, work: Callable[[], Awaitable], failed: str) -> None:
        while True:
            await asyncio.sleep(interval_ms / 1000)
            try:
                await work()
            except Exception as exc:  # the next pass tries again
                if self._log is not None:
                    self._log.exception(failed, error=repr(exc))

    async def close(self) -> None:
        """Cancel what the runtime owns: housekeeping, batches (their appends answered
        NOT_LEADER_OR_FOLLOWER) and loads; every partition is forgotten."""
        for task in self._periodic:
            task.cancel()
        await asyncio.gather(*self._periodic, return_exceptions=True)
        await self._batches.close()
        tasks = list(self._loads.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.partitions.clear()
