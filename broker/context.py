"""What a handler knows about the request it answers."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .protocol.codec import Request

if TYPE_CHECKING:
    from .app import Broker

ANONYMOUS = "User:ANONYMOUS"


@dataclass(slots=True)
class RequestContext:
    broker: "Broker"
    request: Request
    listener: str  # the listener name the request arrived on
    principal: str
    client_host: str
    log: Any

    @property
    def version(self) -> int:
        return self.request.version

    @property
    def cache(self):
        return self.broker.cache

    @property
    def config(self):
        return self.broker.config
