"""New replicas made off the request's path when many come at once (a CreateTopics of 1000
topics, a controller's LeaderAndIsr for thousands of partitions): each costs a log directory and
its files, and making 9,000 of them inside the cache's event would hold the CreateTopics answer,
every Metadata request and every replica fetch for seconds.

The first SYNC_CREATES new replicas of an event-loop turn are made at once, as before (a topic of a
few partitions is led as soon as its metadata is known, and its creator's first produce finds its
leader); past them, a topic waits for the background task, which makes its replicas CHUNK at a time
between other work and then tells the listeners (the coordinator runtimes). Kafka's brokers likewise
answer the controller's LeaderAndIsr after the CreateTopics answer; a produce meanwhile gets the
retriable NOT_LEADER_OR_FOLLOWER. Topics wait in arrival order; a step reads the cache as it is then.
"""

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

SYNC_CREATES = 64  # new replicas made at once per event-loop turn
CHUNK = 16  # new replicas the background task makes between two yields


class CreationPacer:
    def __init__(self, log: Any):
        self._log = log
        self._deferred: dict[str, None] = {}  # topics waiting, in order
        self._wake = asyncio.Event()
        self._made = 0  # replicas made at once this turn
        self._unpaced = 0  # > 0 while start() or the background task makes replicas
        self._listeners: list[Callable[[str], None]] = []

    def defer(self, topic: str) -> bool:
        """Whether a new replica of `topic` is left to the background task (else it is made now)."""
        if self._unpaced:
            return False
        if topic in self._deferred:
            return True
        if self._made >= SYNC_CREATES:
            self._deferred[topic] = None
            self._wake.set()
            return True
        if self._made == 0:
            try:
                asyncio.get_running_loop().call_soon(self._new_turn)
            except RuntimeError:  # no event loop (unit tests): nothing is paced
                return False
        self._made += 1
        return False

    def _new_turn(self) -> None:
        self._made = 0

    @contextlib.contextmanager
    def unpaced(self) -> Iterator[None]:
        """A context in which every new replica is made at once (the broker's start)."""
        self._unpaced += 1
        try:
            yield
        finally:
            self._unpaced -= 1

    def on_created(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """`listener(topic)` once the background task made a deferred topic's replicas; returns
        the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def run(self, steps: Callable[[str], Iterator[None]]) -> None:
        """The background task: `steps(topic)` makes the topic's replicas, yielding between chunks."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._deferred:
                topic = next(iter(self._deferred))
                del self._deferred[topic]
                work = steps(topic)
                while True:
                    with self.unpaced():
                        try:
                            finished = next(work, StopIteration) is StopIteration
                        except Exception as exc:  # noqa: BLE001 - as the cache's listeners: logged, not fatal
                            self._log.exception("making deferred replicas failed", topic=topic, error=repr(exc))
                            finished = True
                    if finished:
                        break
                    await asyncio.sleep(0)
                for listener in list(self._listeners):
                    listener(topic)
                await asyncio.sleep(0)

