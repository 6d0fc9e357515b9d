"""What a handler knows about the request it answers, and what of the broker it may use.

`Services` are the broker's parts a handler reaches, typed, built once by the composition root
(fauxka/broker/app.py) and handed to every connection; each request's `RequestContext` carries them
beside the request's own facts. A handler reads only these fields (never the broker itself), so a
reader, an IDE or the import graph follows a request from its handler into the part that serves
it. Forwarding, auto topic creation and injected faults call back into dispatch and the handlers:
they are typed by what a handler calls on them (Protocols here), which keeps this module out of a
loop with them.
"""

import random
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from fauxka.model.acl_model import SUPPORTED_OPERATIONS, ResourceType, to_bit_field

from .protocol.codec import Request

if TYPE_CHECKING:
    from fauxka.controller.areas import ControllerAreas
    from fauxka.coordinator.group.coordinator import GroupCoordinator
    from fauxka.coordinator.txn.coordinator import TransactionCoordinator
    from fauxka.zkstore.config_entities import EntityConfigReader
    from fauxka.zkstore.consumer_offsets import ZkConsumerOffsets

    from .auth.authorizer import Authorizer
    from .auth.token_cache import TokenCache
    from .config import BrokerConfig, Endpoint
    from .connection import Connection
    from .coordination.producer_ids import ProducerIdManager
    from .coordination.replica_writer import ReplicaPartitionWriter
    from .metadata_cache import MetadataCache
    from .metrics import BrokerMetrics
    from .quotas import Quotas
    from .replication.replica_manager import ReplicaManager

ANONYMOUS = "User:ANONYMOUS"
Spec = tuple[int, int, dict[str, str]]  # an internal topic's (partitions, replication factor, configs)


class Forwarder(Protocol):
    """fauxka/broker/forwarding.py: a forwardable request passed to the active controller in an envelope."""

    async def forward(self, ctx: "RequestContext") -> Any: ...


class TopicCreator(Protocol):
    """fauxka/broker/auto_create.py: topics created on a client's behalf (Metadata, FindCoordinator)."""

    def request(self, names: list[str], ctx: "RequestContext", spec: Spec | None = None) -> None: ...

    async def create(self, names: list[str], ctx: "RequestContext", spec: Spec | None = None,
                     as_broker: bool = False) -> dict[str, int]: ...


class Faults(Protocol):
    """fauxka/broker/fault_injection.py: injected faults, applied around a client's request."""

    async def dispatch(self, ctx: "RequestContext", run: Callable[["RequestContext"], Awaitable[Any]]) -> Any: ...

    def offline(self, broker_id: int, topic: str, partition: int) -> bool: ...

    @property
    def active(self) -> bool: ...


@dataclass(slots=True)
class Services:
    """The broker's parts handlers use; one set per broker, shared by every connection."""

    broker_id: int
    config: "BrokerConfig"
    cache: "MetadataCache"  # the cluster's metadata as this broker knows it
    entity_configs: "EntityConfigReader"  # /config/users|clients|ips read: DescribeClientQuotas, DescribeUserScramCredentials
    v0_offsets: "ZkConsumerOffsets"  # the offsets OffsetCommit v0 / OffsetFetch v0 keep in ZooKeeper
    metrics: "BrokerMetrics"
    authorizer: "Authorizer"
    tokens: "TokenCache"  # delegation tokens
    quotas: "Quotas"
    replicas: "ReplicaManager"  # the partitions this broker holds: appends, fetches, offsets
    groups: "GroupCoordinator"  # the groups of the __consumer_offsets partitions we lead
    transactions: "TransactionCoordinator"  # the transactional ids of the __transaction_state partitions we lead
    partition_writer: "ReplicaPartitionWriter"  # the coordinators' appends; the leader's side of WriteTxnMarkers
    producer_ids: "ProducerIdManager"
    controller: "ControllerAreas"  # the controller's areas: topics, configs, ACLs, ... (active only on the controller)
    auto_create: TopicCreator
    forwarding: Forwarder
    faults: Faults | None
    bound: "list[Endpoint]"  # the listeners as bound (the port a configured 0 became); server.py fills it

    def controller_active(self) -> bool:
        """Whether this broker is the active controller (a forwardable request is answered here)."""
        return self.controller.active

    def advertised_controller_id(self) -> int:
        """The controller id clients are told (advertised.controller)."""
        mode = self.config["advertised.controller"]
        if mode == "self":
            return self.broker_id
        if mode == "random" and self.cache.brokers:
            return random.choice(list(self.cache.brokers))
        return self.cache.controller_id


_SERVICES = attrgetter(*(f.name for f in fields(Services)))


@dataclass(slots=True)
class RequestContext(Services):
    request: Request
    listener: str  # the listener name the request arrived on
    principal: str  # the client's; for a forwarded request, the one inside the envelope
    client_host: str  # likewise, the forwarded client's address
    log: Any
    forwarded_by: int | None = None  # the broker that forwarded this request in an envelope
    connection: "Connection | None" = None  # the connection it arrived on (the envelope's, if forwarded)

    @classmethod
    def of(cls, services: Services, request: Request, listener: str, principal: str, client_host: str, log: Any,
           forwarded_by: int | None = None, connection: "Connection | None" = None) -> "RequestContext":
        return cls(*_SERVICES(services), request, listener, principal, client_host, log, forwarded_by, connection)

    def authorized(self, operation: str, resource_type: str, name: str, *, log_if_allowed: bool = True,
                   log_if_denied: bool = True) -> bool:
        """Kafka's ACL check for this request's principal and host (e.g. "CREATE", "TOPIC", "t").
        A probe (authorized operations, a listing's filter) passes log_if_* = False, as Kafka does."""
        return self.authorizer.authorize(self.principal, self.client_host, operation, resource_type, name,
                                         api=self.request.api.name, log_if_allowed=log_if_allowed,
                                         log_if_denied=log_if_denied)

    def authorized_operations(self, resource_type: str, name: str) -> int:
        """AuthHelper.authorizedOperations: the bit field of the resource type's operations allowed."""
        return to_bit_field(op for op in SUPPORTED_OPERATIONS[ResourceType[resource_type]]
                            if self.authorized(op.name, resource_type, name, log_if_allowed=False,
                                               log_if_denied=False))

    def close_after_response(self) -> None:
        """Close the connection the request came on once it is answered (acks=0: instead of an answer)."""
        if self.connection is not None:
            self.connection.close_after_response = True

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
    def api_key(self) -> int:
        return self.request.api.key
