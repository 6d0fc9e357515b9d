"""Connections from this broker to another one over the inter-broker listener.

The one place that opens them: the forwarding channel to the controller and the replica
fetchers both call `open_channel`. On a SASL inter-broker listener the connection logs in as
this broker (sasl.mechanism.inter.broker.protocol and its JAAS entry), as Kafka's
NetworkClient does for its inter-broker channels.
"""

import asyncio
from typing import TYPE_CHECKING

from .auth.client import SaslClientError, authenticate
from .config import inter_broker_credentials
from .protocol.client import PipelinedConnection
from .protocol.codec import RequestParseError
from .protocol.framing import FrameError

if TYPE_CHECKING:
    from .app import Broker


async def open_channel(broker: "Broker", target_id: int, timeout_s: float, client_id: str) -> PipelinedConnection | None:
    """A pipelined, authenticated connection to broker `target_id`, or None when it has no
    inter-broker endpoint in the metadata cache or cannot be reached or refuses our login."""
    registration = broker.cache.brokers.get(target_id)
    endpoint = registration.endpoint(broker.config.inter_broker_listener) if registration else None
    if endpoint is None:
        return None
    try:
        channel = await PipelinedConnection.open(endpoint.host, endpoint.port, timeout_s, client_id)
    except (OSError, asyncio.TimeoutError):
        return None
    credentials = inter_broker_credentials(broker.config)
    if credentials is not None:  # a SASL inter-broker listener: log in as this broker
        try:
            await authenticate(channel, *credentials, timeout_s)
        except (SaslClientError, FrameError, ConnectionError, OSError, asyncio.TimeoutError, RequestParseError) as exc:
            broker.log.warning("inter-broker authentication failed", target=target_id, client_id=client_id,
                               error=repr(exc))
            await channel.close()
            return None
    return channel
