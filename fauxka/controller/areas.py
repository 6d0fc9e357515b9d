"""The controller's areas, as the request handlers reach them (each is active only while this broker
is the controller). fauxka/broker/app.py, the composition root, builds every area with what it reads
and writes (ZooKeeper, the fenced writer, the election, the metadata cache, the policies, the waits,
the audit) and bundles them here; no area is handed the bundle or another area it does not use."""

from dataclasses import dataclass

from .acls import AclWrites
from .admin import AdminController
from .audit import AuditLog
from .broker_parts import CacheWaits
from .configs import ConfigWrites
from .election import ControllerElection
from .features import FeatureController
from .partition_leadership import PartitionLeadership
from .partitions import PartitionCreation
from .producer_ids import ProducerIdBlocks
from .quotas import QuotaWrites
from .reassignment import Reassignments
from .scram import ScramWrites
from .tokens import TokenWrites


@dataclass(frozen=True, slots=True)
class ControllerAreas:
    election: ControllerElection
    topics: AdminController  # CreateTopics, DeleteTopics
    partitions: PartitionCreation  # CreatePartitions
    configs: ConfigWrites  # AlterConfigs, IncrementalAlterConfigs
    quotas: QuotaWrites  # AlterClientQuotas
    acls: AclWrites  # CreateAcls, DeleteAcls
    scram: ScramWrites  # AlterUserScramCredentials
    tokens: TokenWrites  # Create/Renew/ExpireDelegationToken
    producer_ids: ProducerIdBlocks  # AllocateProducerIds
    leadership: PartitionLeadership  # ElectLeaders, AlterPartition, ControlledShutdown
    reassignments: Reassignments  # Alter/ListPartitionReassignments
    features: FeatureController  # UpdateFeatures
    audit: AuditLog  # the audit line of a request refused before it reached an area
    purgatory: CacheWaits  # a forwarding broker's wait for its own cache to show the controller's write

    @property
    def active(self) -> bool:
        """Whether this broker is the active controller."""
        return self.election.active
