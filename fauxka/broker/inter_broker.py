"""The one place this broker opens connections to other brokers (forwarding to the controller today;
the controller channel and replication fetchers later): the inter-broker listener's endpoint, TLS when
that listener is SSL or SASL_SSL (trusting its trust store, presenting this broker's key store,
checking host names when ssl.endpoint.identification.algorithm=https), then SASL as this broker when
it is SASL_PLAINTEXT or SASL_SSL."""

import asyncio
import ssl

from .auth.client import SaslClientError, authenticate
from .config import BrokerConfig
from .metadata_cache import MetadataCache
from .protocol.client import KafkaConnection, PipelinedConnection
from .protocol.codec import RequestParseError
from .protocol.framing import FrameError


class InterBrokerConnectError(Exception):
    """The peer could not be reached, the TLS handshake or the SASL login failed (the reason is the message)."""


class InterBrokerConnector:
    """Opens connections to the brokers the metadata cache knows, as the config secures them (the
    TLS context is read at each call: a dynamic SSL config may replace it)."""

    def __init__(self, cache: MetadataCache, config: BrokerConfig):
        self._cache = cache
        self._config = config

    async def connect(self, broker_id: int, timeout_s: float, client_id: str, *,
                      pipelined: bool = True) -> PipelinedConnection | KafkaConnection:
        """A connection to broker `broker_id`'s inter-broker listener, secured and authenticated as configured."""
        config = self._config
        registration = self._cache.brokers.get(broker_id)
        endpoint = registration.endpoint(config.inter_broker_listener) if registration else None
        if endpoint is None:
            raise InterBrokerConnectError(f"broker {broker_id} has no {config.inter_broker_listener} endpoint")
        kind = PipelinedConnection if pipelined else KafkaConnection
        try:
            conn = await kind.open(endpoint.host, endpoint.port, timeout_s, client_id, ssl=config.inter_broker_ssl)
        except ssl.SSLError as exc:
            reason = exc.reason or exc
            raise InterBrokerConnectError(f"TLS handshake with broker {broker_id} failed: {reason}") from None
        except (OSError, asyncio.TimeoutError) as exc:
            raise InterBrokerConnectError(f"broker {broker_id} unreachable: {str(exc) or type(exc).__name__}") from None
        credentials = config.inter_broker_credentials()
        if credentials is not None:  # a SASL inter-broker listener: log in as this broker
            try:
                await authenticate(conn, *credentials, timeout_s)
            except (SaslClientError, FrameError, ConnectionError, OSError, asyncio.TimeoutError,
                    RequestParseError) as exc:
                await conn.close()
                raise InterBrokerConnectError(f"authentication with broker {broker_id} failed: {exc!r}") from None
        return conn
