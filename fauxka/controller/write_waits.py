"""How long an admin write's answer waits after ZooKeeper took it: for the brokers to be told of it
(wait_pushed), and with fauxka.admin.blocking=cluster for every live broker to have applied it
(wait_cluster)."""

from typing import Awaitable, Callable, Protocol

from fauxka.model.errors import ErrorCode
from fauxka.zkstore.fenced import FencedWriter

from .broker_parts import CacheWaits, Metadata, Settings

# The longest an admin write's answer waits for the brokers to be told of it (wait_pushed): a
# broker that does not answer the controller (paused, its connection lost) is waited for no longer.
PUSH_WAIT_S = 0.5


class Outcome(Protocol):
    error_code: int
    error_message: str | None


class WriteWaits:
    def __init__(self, config: Settings, cache: Metadata, writer: FencedWriter, purgatory: CacheWaits,
                 pushed: Callable[[float], Awaitable[bool]] | None = None):
        """`pushed(timeout_s)`: until every broker has been told of this controller's writes so far
        (fauxka/broker/controller_channel_manager.py), at most timeout_s."""
        self._config = config
        self._cache = cache
        self._writer = writer
        self._purgatory = purgatory
        self._pushed = pushed

    async def wait_pushed(self) -> None:
        """Until the brokers have been told of what this controller wrote, at most PUSH_WAIT_S, whatever
        the request's timeout (0 included: the answer's code is not changed by it). Kafka answers once
        its own metadata cache has a write; a client whose next request went to another broker then
        met a topic that broker did not know yet (LEADER_NOT_AVAILABLE, retried ~100 ms later). For
        new topics and partitions only: a deletion is answered as Kafka's (the wait cost a DeleteTopics
        ~30 ms, and nothing a client does next needs the other brokers to have dropped the topic)."""
        if self._pushed is not None:
            await self._pushed(PUSH_WAIT_S)

    async def wait_cluster(self, names: list[str], timeout_s: float, outcomes: dict[str, Outcome]) -> None:
        """fauxka.admin.blocking=cluster: also wait until every live broker has applied our
        newest write; names still successful at the deadline get REQUEST_TIMED_OUT."""
        waiting = [n for n in names if outcomes[n].error_code == ErrorCode.none]
        if self._config["fauxka.admin.blocking"] != "cluster" or not waiting:
            return
        version = self._writer.last_version

        def everyone_applied(keys: set[str]) -> set[str]:
            applied = self._cache.applied_by_broker
            return keys if all(applied.get(b, -1) >= version for b in self._cache.brokers) else set()

        if not await self._purgatory.wait({"*cluster*"}, everyone_applied, max(timeout_s, 0)):
            for name in waiting:
                outcomes[name].error_code, outcomes[name].error_message = ErrorCode.request_timed_out, None
