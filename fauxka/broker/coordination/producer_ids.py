"""Producer ids for idempotent producers, handed out from blocks the controller allocates.

Kafka's RPCProducerIdManager: the broker asks the controller (AllocateProducerIds, which
records the block in /latest_producer_id_block) for a block of ids and hands them out one by
one; the next block is fetched when this one is used up. While no block can be had, callers get
COORDINATOR_LOAD_IN_PROGRESS (retriable), as Kafka's clients expect.
"""

import asyncio

from fauxka.model.errors import ErrorCode, KafkaError

from ..controller_channel import ControllerChannel

ALLOCATE_TIMEOUT_S = 5.0


class ProducerIdManager:
    def __init__(self, channel: ControllerChannel, log):
        self._channel = channel
        self._log = log
        self._next = 0
        self._end = 0  # exclusive
        self._lock = asyncio.Lock()

    async def generate(self) -> int:
        async with self._lock:
            if self._next >= self._end:
                try:
                    async with asyncio.timeout(ALLOCATE_TIMEOUT_S):
                        first, count = await self._channel.allocate_producer_ids()
                except (KafkaError, OSError, ConnectionError, asyncio.TimeoutError) as exc:
                    self._log.warning("producer id block allocation failed", error=repr(exc))
                    raise KafkaError(ErrorCode.coordinator_load_in_progress) from None
                self._next, self._end = first, first + count
            producer_id = self._next
            self._next += 1
            return producer_id
