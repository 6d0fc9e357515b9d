"""Waiters keyed by anything hashable (a partition, a group, a topic), woken by key.

Kafka's DelayedOperationPurgatory in small: a delayed produce waits on its partitions'
high watermarks, a long-poll fetch on the partitions it reads, a coordinator on its group.
Whoever changes the state calls `wake(key)`; only the waiters registered under that key
re-run their check (no polling, no waking of unrelated waiters). Every wait has a deadline.
"""

import asyncio
import time
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

T = TypeVar("T")


class _Waiter:
    """One wait's wake-up: a future per round, set by `wake` or the deadline's timer (cheaper than
    an Event under asyncio.wait_for, which makes a task for every round)."""

    __slots__ = ("future", "expired")

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.future = loop.create_future()
        self.expired = False

    def set(self) -> None:
        if not self.future.done():
            self.future.set_result(None)

    def expire(self) -> None:
        self.expired = True  # the loop may run a timer a clock tick early: no second look at the clock
        self.set()


class Purgatory:
    def __init__(self) -> None:
        self._waiters: dict[Hashable, set[_Waiter]] = {}
        self._closed = False

    def __len__(self) -> int:
        """How many distinct keys have a waiter (a gauge for metrics)."""
        return len(self._waiters)

    async def wait(self, keys: Iterable[Hashable], check: Callable[[], T], deadline: float) -> T:
        """Return `check()` once it is truthy, or its last value when `deadline` (monotonic) passes.

        `check` runs at once, then each time one of `keys` is woken. After `close()` a wait
        returns `check()` at once.
        """
        result = check()
        if result or self._closed or deadline <= time.monotonic():
            return result
        loop = asyncio.get_running_loop()
        woken = _Waiter(loop)
        keys = list(keys)
        for key in keys:
            self._waiters.setdefault(key, set()).add(woken)
        timer = loop.call_at(loop.time() + (deadline - time.monotonic()), woken.expire)  # the loop's clock
        try:
            while True:
                await woken.future
                if self._closed or woken.expired or deadline <= time.monotonic():
                    return check()
                woken.future = loop.create_future()
                result = check()
                if result:
                    return result
        finally:
            timer.cancel()
            for key in keys:
                waiters = self._waiters.get(key)
                if waiters is not None:
                    waiters.discard(woken)
                    if not waiters:
                        del self._waiters[key]

    def wake(self, key: Hashable) -> None:
        for woken in self._waiters.get(key, ()):
            woken.set()

    def wake_all(self) -> None:
        for waiters in self._waiters.values():
            for woken in waiters:
                woken.set()

    def close(self) -> None:
        """Shutdown: every waiter returns now with its check's value; later waits do not block."""
        self._closed = True
        self.wake_all()
