"""The keyed purgatory (fauxka/broker/purgatory.py): woken by key, bounded by its deadline."""

import asyncio
import time

from fauxka.broker.purgatory import Purgatory


async def test_a_wait_returns_once_its_key_is_woken_and_the_check_passes():
    purgatory, state = Purgatory(), {"hw": 0}
    waiter = asyncio.ensure_future(purgatory.wait([("t", 0)], lambda: state["hw"] >= 2, time.monotonic() + 5))
    await asyncio.sleep(0.01)
    state["hw"] = 1
    purgatory.wake(("t", 0))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    state["hw"] = 2
    purgatory.wake(("t", 0))
    assert await asyncio.wait_for(waiter, 1) is True
    assert len(purgatory) == 0


async def test_waking_another_key_does_not_run_the_check():
    purgatory, calls = Purgatory(), []
    waiter = asyncio.ensure_future(purgatory.wait(["a"], lambda: calls.append(1) or False, time.monotonic() + 0.2))
    await asyncio.sleep(0.01)
    purgatory.wake("b")
    await asyncio.sleep(0.01)
    assert len(calls) == 1
    assert await waiter is False  # deadline: the check's last value
    assert len(calls) == 2


async def test_the_deadline_bounds_the_wait_and_close_releases_everyone():
    purgatory = Purgatory()
    start = time.monotonic()
    assert await purgatory.wait(["a"], lambda: 0, start + 0.05) == 0
    assert 0.04 < time.monotonic() - start < 5  # the 0.05 s deadline, however slow the box
    waiter = asyncio.ensure_future(purgatory.wait(["a"], lambda: None, time.monotonic() + 30))
    await asyncio.sleep(0.01)
    purgatory.close()
    assert await asyncio.wait_for(waiter, 1) is None
    assert await asyncio.wait_for(purgatory.wait(["a"], lambda: None, time.monotonic() + 30), 1) is None


async def test_a_cancellation_that_meets_a_wake_is_not_lost():
    """Shutdown cancels a long-poll fetch just after a leadership change woke it. Python 3.11's
    asyncio.wait_for returned the finished inner wait and dropped the cancellation (CPython
    gh-86296): the connection task went on serving and the broker never exited."""
    purgatory = Purgatory()
    waiter = asyncio.ensure_future(purgatory.wait(["a"], lambda: False, time.monotonic() + 30))
    await asyncio.sleep(0.01)
    purgatory.wake("a")
    waiter.cancel()
    await asyncio.wait([waiter], timeout=10)
    assert waiter.cancelled()
    assert len(purgatory) == 0
