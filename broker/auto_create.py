"""auto.create.topics.enable: Metadata for an unknown topic asks the controller to create it.

As Kafka 3.x's AutoTopicCreationManager: the active controller creates at once
(the client sees LEADER_NOT_AVAILABLE and retries); another broker sends a
CreateTopics to the controller in the background (the client sees
UNKNOWN_TOPIC_OR_PARTITION and retries). A topic already asked for is not asked again.
"""

import asyncio
from typing import TYPE_CHECKING

from controller.audit import Caller
from controller.topics import NewTopic

from .protocol.build import build
from .protocol.client import request_once
from .protocol.codec import request_schema

if TYPE_CHECKING:
    from .app import Broker

LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION = 5, 3
_CREATE_TOPICS_VERSION = 7


class AutoTopicCreator:
    def __init__(self, broker: "Broker"):
        self._broker = broker
        self._in_flight: set[str] = set()
        self._tasks: set[asyncio.Task] = set()

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def request(self, names: list[str], caller: Caller) -> int:
        """Ask for `names` to be created; the error code Metadata answers for them."""
        fresh = [n for n in names if n not in self._in_flight]
        self._in_flight.update(fresh)
        local = self._broker.admin.active
        if fresh:
            work = self._create_here(fresh, caller) if local else self._ask_controller(fresh)
            task = asyncio.get_running_loop().create_task(work, name="auto-create-topics")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(lambda _t: self._in_flight.difference_update(fresh))
        return LEADER_NOT_AVAILABLE if local else UNKNOWN_TOPIC_OR_PARTITION

    def _defaults(self) -> tuple[int, int]:
        config = self._broker.config
        return config["num.partitions"], config["default.replication.factor"]

    async def _create_here(self, names: list[str], caller: Caller) -> None:
        partitions, replication = self._defaults()
        await self._broker.admin.create_topics([NewTopic(n, partitions, replication) for n in names],
                                               validate_only=False, timeout_ms=0, caller=caller)

    async def _ask_controller(self, names: list[str]) -> None:
        broker = self._broker
        controller = broker.cache.brokers.get(broker.cache.controller_id)
        endpoint = controller.endpoint(broker.config.inter_broker_listener) if controller else None
        if endpoint is None:
            return  # no controller known: the client's retry asks again
        partitions, replication = self._defaults()
        request = build(request_schema(19, _CREATE_TOPICS_VERSION), {
            "topics": [{"name": n, "num_partitions": partitions, "replication_factor": replication,
                        "assignments": [], "configs": []} for n in names],
            "timeout": 0, "validate_only": False})
        timeout_s = broker.config["request.timeout.ms"] / 1000
        try:
            await request_once(endpoint.host, endpoint.port, request, timeout_s)
        except (OSError, asyncio.TimeoutError, Exception) as exc:  # the client will retry Metadata
            broker.log.warning("auto topic creation request failed", topics=names, error=repr(exc))
