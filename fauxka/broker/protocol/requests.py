"""The request types the handlers are typed with (fauxka/broker/handlers/*: `handle(ctx, request)`).

Each is kio's class (or the one declared here where kio has none) of the newest version fauxka
serves of that api. A handler also answers the older versions, whose requests are kio's classes of
those versions: the same fields less those added since (the handler's header says which, and the
handler reads them only from the version that has them). The classes are imported for a type
checker only: importing them all would load every api's schema at start, which kio otherwise loads
on first use. tests/unit/test_protocol.py checks that each handler's type is the newest version's class.
"""

from typing import TYPE_CHECKING, Any, TypeAlias

from kio.static.protocol import Entity

if TYPE_CHECKING:
    from kio.schema.add_offsets_to_txn.v3.request import AddOffsetsToTxnRequest
    from kio.schema.add_partitions_to_txn.v4.request import AddPartitionsToTxnRequest
    from kio.schema.allocate_producer_ids.v0.request import AllocateProducerIdsRequest
    from kio.schema.alter_client_quotas.v1.request import AlterClientQuotasRequest
    from kio.schema.alter_configs.v2.request import AlterConfigsRequest
    from kio.schema.alter_partition.v3.request import AlterPartitionRequest
    from kio.schema.alter_partition_reassignments.v0.request import AlterPartitionReassignmentsRequest
    from kio.schema.alter_replica_log_dirs.v2.request import AlterReplicaLogDirsRequest
    from kio.schema.alter_user_scram_credentials.v0.request import AlterUserScramCredentialsRequest
    from kio.schema.api_versions.v4.request import ApiVersionsRequest
    from kio.schema.create_acls.v3.request import CreateAclsRequest
    from kio.schema.create_delegation_token.v3.request import CreateDelegationTokenRequest
    from kio.schema.create_partitions.v3.request import CreatePartitionsRequest
    from kio.schema.create_topics.v7.request import CreateTopicsRequest
    from kio.schema.delete_acls.v3.request import DeleteAclsRequest
    from kio.schema.delete_groups.v2.request import DeleteGroupsRequest
    from kio.schema.delete_records.v2.request import DeleteRecordsRequest
    from kio.schema.delete_topics.v6.request import DeleteTopicsRequest
    from kio.schema.describe_acls.v3.request import DescribeAclsRequest
    from kio.schema.describe_client_quotas.v1.request import DescribeClientQuotasRequest
    from kio.schema.describe_cluster.v1.request import DescribeClusterRequest
    from kio.schema.describe_configs.v4.request import DescribeConfigsRequest
    from kio.schema.describe_delegation_token.v3.request import DescribeDelegationTokenRequest
    from kio.schema.describe_groups.v5.request import DescribeGroupsRequest
    from kio.schema.describe_log_dirs.v4.request import DescribeLogDirsRequest
    from kio.schema.describe_producers.v0.request import DescribeProducersRequest
    from kio.schema.describe_transactions.v0.request import DescribeTransactionsRequest
    from kio.schema.describe_user_scram_credentials.v0.request import DescribeUserScramCredentialsRequest
    from kio.schema.elect_leaders.v2.request import ElectLeadersRequest
    from kio.schema.end_txn.v3.request import EndTxnRequest
    from kio.schema.envelope.v0.request import EnvelopeRequest
    from kio.schema.expire_delegation_token.v2.request import ExpireDelegationTokenRequest
    from kio.schema.fetch.v17.request import FetchRequest
    from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
    from kio.schema.heartbeat.v4.request import HeartbeatRequest
    from kio.schema.incremental_alter_configs.v1.request import IncrementalAlterConfigsRequest
    from kio.schema.init_producer_id.v5.request import InitProducerIdRequest
    from kio.schema.join_group.v9.request import JoinGroupRequest
    from kio.schema.leave_group.v5.request import LeaveGroupRequest
    from kio.schema.list_groups.v5.request import ListGroupsRequest
    from kio.schema.list_offsets.v9.request import ListOffsetsRequest
    from kio.schema.list_partition_reassignments.v0.request import ListPartitionReassignmentsRequest
    from kio.schema.list_transactions.v0.request import ListTransactionsRequest
    from kio.schema.metadata.v12.request import MetadataRequest
    from kio.schema.offset_commit.v9.request import OffsetCommitRequest
    from kio.schema.offset_delete.v0.request import OffsetDeleteRequest
    from kio.schema.offset_fetch.v9.request import OffsetFetchRequest
    from kio.schema.offset_for_leader_epoch.v4.request import OffsetForLeaderEpochRequest
    from kio.schema.produce.v11.request import ProduceRequest
    from kio.schema.renew_delegation_token.v2.request import RenewDelegationTokenRequest
    from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
    from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest
    from kio.schema.sync_group.v5.request import SyncGroupRequest
    from kio.schema.txn_offset_commit.v3.request import TxnOffsetCommitRequest
    from kio.schema.update_features.v1.request import UpdateFeaturesRequest
    from kio.schema.write_txn_markers.v1.request import WriteTxnMarkersRequest

    # kio has no ControlledShutdown: fauxka/broker/protocol/declare.py declares its class at run time
    ControlledShutdownRequest: TypeAlias = Any
    # nor LeaderAndIsr, StopReplica, UpdateMetadata (the controller's requests to brokers): declared there too
    LeaderAndIsrRequest: TypeAlias = Any
    StopReplicaRequest: TypeAlias = Any
    UpdateMetadataRequest: TypeAlias = Any

# What a handler answers (fauxka/broker/dispatch.py): the response entity of the request's version, the
# encoded response to pass through as it came (a forwarded request's), or None: no response at all
# (Produce with acks=0).
Response: TypeAlias = Entity | bytes | None
