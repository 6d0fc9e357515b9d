"""What a handler knows about the request it answers."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from model.acl_model import SUPPORTED_OPERATIONS, ResourceType, to_bit_field

from .protocol.codec import Request

if TYPE_CHECKING:
    from .app import Broker

ANONYMOUS = "User:ANONYMOUS"


@dataclass(slots=True)
class RequestContext:
    broker: "Broker"
    request: Request
    listener: str  # the listener name the request arrived on
    principal: str  # the client's; for a forwarded request, the one inside the envelope
    client_host: str  # likewise, the forwarded client's address
    log: Any
    forwarded_by: int | None = None  # the broker that forwarded this request in an envelope
    connection: Any = None  # broker.connection.Connection it arrived on (the envelope's, if forwarded)

    def authorized(self, operation: str, resource_type: str, name: str, *, log_if_allowed: bool = True,
                   log_if_denied: bool = True) -> bool:
        """Kafka's ACL check for this request's principal and host (e.g. "CREATE", "TOPIC", "t").
        A probe (authorized operations, a listing's filter) passes log_if_* = False, as Kafka does."""
        return self.broker.authorizer.authorize(self.principal, self.client_host, operation, resource_type, name,
                                                api=self.request.api.name, log_if_allowed=log_if_allowed,
                                                log_if_denied=log_if_denied)

    def authorized_operations(self, resource_type: str, name: str) -> int:
        """AuthHelper.authorizedOperations: the bit field of the resource type's operations allowed."""
        return to_bit_field(op for op in SUPPORTED_OPERATIONS[ResourceType[resource_type]]
                            if self.authorized(op.name, resource_type, name, log_if_allowed=False,
                                               log_if_denied=False))

    def release_connection(self) -> None:
        """What is left of this request is a wait (acks=all's DelayedProduce): the server may read and
        start the connection's next Produce meanwhile, still answering in order (server.py)."""
        release = getattr(self.connection, "release", None) if self.forwarded_by is None else None
        if release is not None and not release.done():
            release.set_result(None)

    @property
    def version(self) -> int:
        return self.request.version

    @property
    def cache(self):
        return self.broker.cache

    @property
    def config(self):
        return self.broker.config
