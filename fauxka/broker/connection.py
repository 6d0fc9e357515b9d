"""Per-connection state the server keeps between requests."""

from dataclasses import dataclass
from typing import Any

from .config import Endpoint

ANONYMOUS = "User:ANONYMOUS"


@dataclass(slots=True)
class Connection:
    endpoint: Endpoint
    peer_host: str
    principal: str = ANONYMOUS
    token_authenticated: bool = False  # SCRAM with a delegation token (KafkaPrincipal.tokenAuthenticated)
    sasl: Any = None  # the SASL exchange of a SASL_* listener (broker.auth), None on PLAINTEXT
    close_after_response: bool = False  # e.g. after a failed authentication, as Kafka does
    muted_until: float = 0.0  # time.monotonic() until which no request is read (KIP-219 throttling)
    release: Any = None  # the Produce in flight's asyncio.Future: set, the next request may be read (server.py)
    # KIP-511: what its ApiVersions v3+ named (Kafka's ClientInformation; EMPTY until then)
    client_software: tuple[str, str] = ("unknown", "unknown")

    @property
    def listener(self) -> str:
        """The name of the listener the connection came in on."""
        return self.endpoint.listener
