"""The one pipelined inter-broker connection from this broker to the current controller.

Shared by the forwarding manager (envelopes, KIP-590) and the controller channel
(AlterPartition, AllocateProducerIds, ControlledShutdown), as Kafka's brokers share the
node-to-controller channel (NodeToControllerChannelManager). It follows the metadata
cache's controller; fauxka/broker/inter_broker.py secures it (TLS, SASL) as the listener requires.
"""

import asyncio
import time
from typing import Any

from .inter_broker import InterBrokerConnectError, InterBrokerConnector
from .metadata_cache import MetadataCache
from .protocol.client import PipelinedConnection

RETRY_BACKOFF_S = 0.1
CLIENT_ID_PREFIX = "fauxka-forwarder-"  # the controller reads the sending broker's id from it


class ControllerLink:
    def __init__(self, broker_id: int, cache: MetadataCache, connector: InterBrokerConnector, log: Any):
        self._client_id = f"{CLIENT_ID_PREFIX}{broker_id}"
        self._cache = cache
        self._connector = connector
        self._log = log
        self._channel: PipelinedConnection | None = None
        self._channel_controller = -1
        self._connecting = asyncio.Lock()
        self._controller_news = asyncio.Event()
        cache.subscribe(self._on_cache_event)

    def _on_cache_event(self, event: tuple) -> None:
        if event[0] in ("controller", "broker"):
            self._controller_news.set()

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None

    async def connection(self, timeout_s: float) -> PipelinedConnection | None:
        """The connection to the controller the cache names (opened if needed); None when there is
        none or it cannot be reached now."""
        async with self._connecting:
            cache = self._cache
            controller = cache.controller_id
            if self._channel is not None and not self._channel.closed and self._channel_controller == controller:
                return self._channel
            await self.drop(self._channel)
            if controller not in cache.brokers:
                return None
            try:
                channel = await self._connector.connect(controller, timeout_s, self._client_id)
            except InterBrokerConnectError as exc:
                self._log.warning("no connection to the controller", error=str(exc))
                return None
            self._channel, self._channel_controller = channel, controller
            return channel

    async def drop(self, channel: PipelinedConnection | None) -> None:
        """Forget `channel` (NOT_CONTROLLER, a disconnect): the next call reconnects."""
        if channel is None:
            return
        if channel is self._channel:
            self._channel, self._channel_controller = None, -1
        await channel.close()

    async def wait_for_news(self, deadline: float, backoff_s: float = RETRY_BACKOFF_S) -> None:
        """Until the cache names a controller or the brokers change, at most `backoff_s` and never
        past `deadline` (monotonic)."""
        self._controller_news.clear()
        wait = min(backoff_s, max(deadline - time.monotonic(), 0))
        try:
            async with asyncio.timeout(wait):
                await self._controller_news.wait()
        except TimeoutError:
            pass
