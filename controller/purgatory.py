"""Timeout-bounded waiting for admin writes to show in the metadata cache.

A waiter names the topics it cares about and a check of which are complete;
it is re-checked only when the cache reports a change to one of them (no
polling), and gives up at its deadline.
"""

import asyncio
import time
from typing import Callable


class Purgatory:
    def __init__(self, subscribe: Callable[[Callable[[tuple], None]], Callable[[], None]]):
        self._waiters: dict[asyncio.Event, set[str]] = {}
        self._unsubscribe = subscribe(self._on_event)

    def close(self) -> None:
        self._unsubscribe()
        for event in self._waiters:
            event.set()

    def _on_event(self, event: tuple) -> None:
        kind = event[0]
        for waiter, topics in self._waiters.items():
            if kind in ("broker", "controller", "deleting", "applied") or (len(event) > 1 and event[1] in topics):
                waiter.set()

    async def wait(self, topics: set[str], complete: Callable[[set[str]], set[str]], timeout_s: float) -> set[str]:
        """Wait until `complete(pending)` covers every topic or the timeout passes; the completed ones."""
        deadline = time.monotonic() + timeout_s
        done: set[str] = set()
        pending = set(topics)
        woken = asyncio.Event()
        self._waiters[woken] = pending
        try:
            while pending:
                finished = complete(set(pending))
                done |= finished
                pending -= finished
                remaining = deadline - time.monotonic()
                if not pending or remaining <= 0:
                    break
                woken.clear()
                try:
                    await asyncio.wait_for(woken.wait(), remaining)
                except asyncio.TimeoutError:
                    done |= complete(set(pending))
                    break
        finally:
            del self._waiters[woken]
        return done
