"""The controller's wait for its writes to show in the cache (fauxka/broker/cache_purgatory.py): woken by
the topic an event names, or by every event that can complete any wait; bounded by its timeout."""

import asyncio
import time

from fauxka.broker.cache_purgatory import CachePurgatory


class Events:
    def __init__(self):
        self.listeners = []

    def subscribe(self, listener):
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def emit(self, event):
        for listener in list(self.listeners):
            listener(event)


async def _started(purgatory, topics, complete, timeout_s=5.0):
    task = asyncio.ensure_future(purgatory.wait(topics, complete, timeout_s))
    await asyncio.sleep(0.01)
    return task


def test_an_event_wakes_only_the_waiters_on_its_topic():
    async def run():
        events, shown, calls = Events(), set(), []
        purgatory = CachePurgatory(events.subscribe)

        def complete(pending):
            calls.append(set(pending))
            return pending & shown
        task = await _started(purgatory, {"a", "b"}, complete)
        assert calls == [{"a", "b"}]
        shown.add("a")
        events.emit(("topic", "other"))
        await asyncio.sleep(0.01)
        assert len(calls) == 1  # not woken by another topic's event
        events.emit(("partition", "a", 0))
        await asyncio.sleep(0.01)
        assert calls[-1] == {"a", "b"} and not task.done()
        shown.add("b")
        events.emit(("topic_config", "b"))
        assert await asyncio.wait_for(task, 1) == {"a", "b"}
        assert calls[-1] == {"b"}
        purgatory.close()
        assert events.listeners == []
    asyncio.run(run())


def test_cluster_events_wake_every_waiter_and_the_timeout_returns_what_completed():
    async def run():
        events, applied = Events(), []
        purgatory = CachePurgatory(events.subscribe)
        task = await _started(purgatory, {"*cluster*"}, lambda keys: keys if applied else set())
        applied.append(1)
        events.emit(("applied", 2))
        assert await asyncio.wait_for(task, 1) == {"*cluster*"}
        started = time.monotonic()
        assert await purgatory.wait({"x", "y"}, lambda keys: keys & {"x"}, 0.05) == {"x"}
        assert 0.04 <= time.monotonic() - started < 5  # the 0.05 s timeout, however slow the box
        assert await purgatory.wait(set(), lambda keys: 1 / 0, 5) == set()
    asyncio.run(run())


def test_close_ends_waits_at_once():
    async def run():
        events = Events()
        purgatory = CachePurgatory(events.subscribe)
        task = await _started(purgatory, {"a"}, lambda keys: set(), timeout_s=30)
        purgatory.close()
        assert await asyncio.wait_for(task, 1) == set()
    asyncio.run(run())
