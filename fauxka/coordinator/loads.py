"""Load by replay, unload, and the leader-epoch check of a coordinator's partitions: what the group
coordinator (__consumer_offsets) and the transaction coordinator (__transaction_state) share
(Kafka's CoordinatorRuntime scheduleLoadOperation / scheduleUnloadOperation).

- `became_leader(p, epoch)`: the partition is LOADING (COORDINATOR_LOAD_IN_PROGRESS) while its
  log is replayed from the log start to the log end (`replay(partition, *record)` per record, yielding to
  other work every 1000 records), then `on_loaded(p)` runs and it is ACTIVE.
- `lost_leadership(p)`: the load is cancelled and `on_unload(p)` forgets its state (NOT_COORDINATOR).
- `leads(p)`: this broker still leads p at the epoch it loaded (appends check it: NOT_COORDINATOR).
"""

import asyncio
import enum
import time
from collections import deque
from typing import Callable

from fauxka.model.errors import ErrorCode


class Load(enum.Enum):
    LOADING = "loading"
    ACTIVE = "active"


class PartitionLoads:
    def __init__(self, host, topic: str, replay: Callable, on_loaded: Callable[[int], dict],
                 on_unload: Callable[[int], None], *, log=None):
        self.host = host
        self.topic = topic
        self.partitions: dict[int, tuple[Load, int]] = {}  # partition -> (state, leader epoch)
        self.load_times_ms: list[float] = []
        self.recent_loads: deque[tuple[float, float]] = deque(maxlen=64)  # (monotonic end, ms) for metrics
        self._replay, self._on_loaded, self._on_unload = replay, on_loaded, on_unload
        self._log = log
        self._tasks: dict[int, asyncio.Task] = {}

    def status(self, partition: int) -> ErrorCode:
        state = self.partitions.get(partition)
        if state is None:
            return ErrorCode.not_coordinator
        return ErrorCode.coordinator_load_in_progress if state[0] is Load.LOADING else ErrorCode.none

    def loading(self) -> bool:
        """Some partition is still LOADING (a listing answers COORDINATOR_LOAD_IN_PROGRESS)."""
        return any(state is Load.LOADING for state, _ in list(self.partitions.values()))

    def leads(self, partition: int) -> bool:
        state = self.partitions.get(partition)
        return state is not None and self.host.leader_epoch(self.topic, partition) == state[1]

    def became_leader(self, partition: int, epoch: int) -> None:
        current = self.partitions.get(partition)
        if current is not None and current[1] == epoch:
            return
        if current is not None:
            self._forget(partition)
        self.partitions[partition] = (Load.LOADING, epoch)
        self._tasks[partition] = asyncio.get_running_loop().create_task(
            self._load(partition, epoch), name=f"load-{self.topic}-{partition}")

    def lost_leadership(self, partition: int) -> None:
        if partition in self.partitions:
            self._forget(partition)
            if self._log is not None:
                self._log.info("unloaded coordinator partition", topic=self.topic, partition=partition)

    def _forget(self, partition: int) -> None:
        del self.partitions[partition]
        task = self._tasks.pop(partition, None)
        if task is not None:
            task.cancel()
        self._on_unload(partition)

    async def _load(self, partition: int, epoch: int) -> None:
        started = time.monotonic()
        count = 0
        try:
            await asyncio.sleep(0)  # let the replica manager finish becoming leader
            for record in self.host.records(self.topic, partition):
                self._replay(partition, *record)
                count += 1
                if count % 1000 == 0:
                    await asyncio.sleep(0)  # other partitions' requests are not held up
                    if self.partitions.get(partition) != (Load.LOADING, epoch):
                        return
            details = self._on_loaded(partition)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a damaged log: stay unloaded rather than answer wrongly
            if self._log is not None:
                self._log.exception("loading coordinator partition failed", topic=self.topic, partition=partition,
                                    error=repr(exc))
            self.partitions.pop(partition, None)
            return
        finally:
            self._tasks.pop(partition, None)
        if self.partitions.get(partition) == (Load.LOADING, epoch):
            self.partitions[partition] = (Load.ACTIVE, epoch)
            elapsed = (time.monotonic() - started) * 1000
            self.load_times_ms.append(elapsed)
            self.recent_loads.append((time.monotonic(), elapsed))
            if self._log is not None:
                self._log.info("loaded coordinator partition", topic=self.topic, partition=partition, epoch=epoch,
                               records=count, ms=round(elapsed, 1), **details)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.partitions.clear()
