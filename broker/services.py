"""What a request may use on this broker: the collaborators broker/app.py builds, handed to the
server as one typed bundle, which every request's context carries (as `ctx.broker` for now).
Built once by app.py; it owns nothing and starts nothing: app.py starts and stops what is in it."""

import random
from dataclasses import dataclass, field

from controller.admin import AdminController
from controller.features import FeatureController
from controller.partition_leadership import PartitionLeadership
from controller.reassignment import Reassignments
from zkstore import ZkStore

from .auth.authorizer import Authorizer
from .auth.token_cache import TokenCache
from .auto_create import AutoTopicCreator
from .config import BrokerConfig, Endpoint
from .coordinators import Coordinators
from .fault_injection import FaultInjector
from .forwarding import ForwardingManager
from .metadata_cache import MetadataCache
from .metrics import BrokerMetrics
from .producer_ids import ProducerIdManager
from .quotas import Quotas
from .replication.replica_manager import ReplicaManager
from .txn_coordinator import TxnCoordinator


@dataclass(slots=True, eq=False)
class Services:
    broker_id: int
    config: BrokerConfig
    cache: MetadataCache
    zk: ZkStore  # the admin apis' ZooKeeper reads (quotas, SCRAM users, ZooKeeper-stored offsets)
    metrics: BrokerMetrics
    authorizer: Authorizer
    tokens: TokenCache
    quotas: Quotas
    admin: AdminController  # the controller's admin plane (active while this broker is the controller)
    leadership: PartitionLeadership
    reassignments: Reassignments
    features: FeatureController
    forwarding: ForwardingManager
    replicas: ReplicaManager
    producer_ids: ProducerIdManager
    groups: Coordinators  # the group coordinator role
    transactions: TxnCoordinator  # the transaction coordinator role
    auto_create: AutoTopicCreator
    faults: FaultInjector
    bound: list[Endpoint] = field(default_factory=list)  # the listeners as bound (server.py fills it)

    @property
    def coordinators(self) -> Coordinators:
        """Both coordinator roles, as the handlers reach them today (`ctx.broker.coordinators.txn`)."""
        return self.groups

    def advertised_controller_id(self) -> int:
        """The controller id clients are told (advertised.controller)."""
        mode = self.config["advertised.controller"]
        if mode == "self":
            return self.broker_id
        if mode == "random" and self.cache.brokers:
            return random.choice(list(self.cache.brokers))
        return self.cache.controller_id
