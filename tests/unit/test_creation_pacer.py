"""CreationPacer: new replicas made at once up to SYNC_CREATES per event-loop turn, the rest by
its background task in order, the listeners told afterwards."""

import asyncio

import structlog

from fauxka.broker.replication.creation_pacer import SYNC_CREATES, CreationPacer


def test_past_the_limit_a_turn_defers_and_the_task_makes_them_then_tells_the_listeners():
    async def scenario():
        pacer = CreationPacer(structlog.get_logger())
        made: list[str] = []
        told: list[str] = []
        pacer.on_created(told.append)

        def steps(topic):
            made.append(f"{topic}:1")
            yield
            made.append(f"{topic}:2")

        task = asyncio.get_running_loop().create_task(pacer.run(steps))
        at_once = [pacer.defer("a") for _ in range(SYNC_CREATES)]
        assert at_once == [False] * SYNC_CREATES
        assert pacer.defer("b") and pacer.defer("c") and pacer.defer("b")
        with pacer.unpaced():
            assert not pacer.defer("d")  # the broker's start: everything at once
        for _ in range(20):
            await asyncio.sleep(0)
        assert made == ["b:1", "b:2", "c:1", "c:2"] and told == ["b", "c"]
        assert not pacer.defer("e")  # a new turn: at once again
        task.cancel()

    asyncio.run(scenario())


def test_without_an_event_loop_nothing_is_deferred():
    pacer = CreationPacer(structlog.get_logger())
    assert not any(pacer.defer("a") for _ in range(SYNC_CREATES + 5))
