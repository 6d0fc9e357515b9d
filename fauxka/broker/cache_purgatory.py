"""Timeout-bounded waiting for admin writes to show in the metadata cache, keyed by topic.

The controller's admin writes (fauxka/controller/admin.py, partitions.py, configs.py) wait here until
the cache shows what they wrote, as Kafka's ZK admin path waits for its metadata (e.g.
CreateTopics' DelayedCreatePartitions completes once every new partition has a leader). This
adapter turns the cache's change events into wakes of fauxka/broker/purgatory.py's keyed `Purgatory`:
an event about one topic (or config entity) wakes only the waiters on that key; events that can
complete any wait (a broker or the controller changed, deletions, a broker applied a change)
wake every waiter. No polling; every wait has its deadline.
"""

import time
from typing import Callable

from .purgatory import Purgatory

WAKE_ALL = frozenset({"broker", "controller", "deleting", "applied"})


class CachePurgatory:
    def __init__(self, subscribe: Callable[[Callable[[tuple], None]], Callable[[], None]]):
        self._purgatory = Purgatory()
        self._unsubscribe = subscribe(self._on_event)

    def close(self) -> None:
        """Shutdown: stop listening; every wait returns now with what has completed."""
        self._unsubscribe()
        self._purgatory.close()

    def _on_event(self, event: tuple) -> None:
        if event[0] in WAKE_ALL:
            self._purgatory.wake_all()
        elif len(event) > 1:
            self._purgatory.wake(event[1])

    async def wait(self, topics: set[str], complete: Callable[[set[str]], set[str]], timeout_s: float) -> set[str]:
        """Wait until `complete(pending)` covers every topic or the timeout passes; the completed ones."""
        done: set[str] = set()
        pending = set(topics)
        if not pending:
            return done

        def check() -> bool:
            finished = complete(set(pending))
            done.update(finished)
            pending.difference_update(finished)
            return not pending

        await self._purgatory.wait(topics, check, time.monotonic() + timeout_s)
        return done
