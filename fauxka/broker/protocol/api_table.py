"""The one table of the APIs fauxka speaks.

ApiVersions is derived from it, the forwarding layer reads `forwardable` from it and dispatch
enforces its `role`: nothing is typed twice. Who answers each api is fauxka/broker/handlers/table.py
(the handler module named `name`).
"""

import enum
from dataclasses import dataclass, field


class Role(enum.Enum):
    """Which broker answers an api (Kafka's KafkaApis checks, made one column of the table)."""

    ANY = "any"  # every broker answers it
    CONTROLLER = "controller"  # the active controller (NOT_CONTROLLER elsewhere, unless forwardable)
    LEADER = "leader"  # the partition leader; checked per partition by the handler (NOT_LEADER_OR_FOLLOWER)
    GROUP_COORDINATOR = "group_coordinator"  # the group's coordinator (NOT_COORDINATOR elsewhere)
    TXN_COORDINATOR = "txn_coordinator"  # the transactional id's coordinator (NOT_COORDINATOR elsewhere)


@dataclass(frozen=True, slots=True)
class Api:
    key: int
    name: str  # kio's schema name, also the handler module's name
    min_version: int
    max_version: int
    forwardable: bool = False  # KIP-590: a non-controller forwards it to the controller
    role: Role = field(default=Role.ANY, kw_only=True)  # who answers it; enforced by fauxka/broker/dispatch.py

    @property
    def advertised_range(self) -> tuple[int, int]:
        """(min, max) as ApiVersions tells clients: exactly the versions served."""
        return self.min_version, self.max_version

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


TABLE: dict[int, Api] = {
    api.key: api
    for api in (
        # Produce from v0 as Kafka 3.9 (librdkafka before 2.11.1 compresses gzip/snappy/lz4 only
        # when a broker's Produce range starts at 0: librdkafka#4956)
        Api(0, "produce", 0, 11, role=Role.LEADER),
        Api(1, "fetch", 0, 17, role=Role.LEADER),
        Api(2, "list_offsets", 0, 9, role=Role.LEADER),
        Api(3, "metadata", 0, 12),
        # the controller's requests to the brokers (ZooKeeper mode; kio lacks them: declare.py)
        Api(4, "leader_and_isr", 0, 7),
        Api(5, "stop_replica", 0, 4),
        Api(6, "update_metadata", 0, 8),
        Api(7, "controlled_shutdown", 0, 3, role=Role.CONTROLLER),
        Api(8, "offset_commit", 0, 9, role=Role.GROUP_COORDINATOR),
        Api(9, "offset_fetch", 0, 9, role=Role.GROUP_COORDINATOR),
        Api(10, "find_coordinator", 0, 4),
        Api(11, "join_group", 0, 9, role=Role.GROUP_COORDINATOR),
        Api(12, "heartbeat", 0, 4, role=Role.GROUP_COORDINATOR),
        Api(13, "leave_group", 0, 5, role=Role.GROUP_COORDINATOR),
        Api(14, "sync_group", 0, 5, role=Role.GROUP_COORDINATOR),
        Api(15, "describe_groups", 0, 5, role=Role.GROUP_COORDINATOR),
        Api(16, "list_groups", 0, 5),
        Api(17, "sasl_handshake", 0, 1),
        Api(18, "api_versions", 0, 4),
        Api(19, "create_topics", 2, 7, forwardable=True, role=Role.CONTROLLER),
        Api(20, "delete_topics", 1, 6, forwardable=True, role=Role.CONTROLLER),
        Api(21, "delete_records", 0, 2, role=Role.LEADER),
        Api(22, "init_producer_id", 0, 5, role=Role.TXN_COORDINATOR),
        Api(23, "offset_for_leader_epoch", 0, 4, role=Role.LEADER),
        Api(24, "add_partitions_to_txn", 0, 4, role=Role.TXN_COORDINATOR),
        Api(25, "add_offsets_to_txn", 0, 3, role=Role.TXN_COORDINATOR),
        Api(26, "end_txn", 0, 3, role=Role.TXN_COORDINATOR),
        Api(27, "write_txn_markers", 0, 1),
        Api(28, "txn_offset_commit", 0, 3, role=Role.GROUP_COORDINATOR),
        Api(29, "describe_acls", 1, 3),
        Api(30, "create_acls", 1, 3, forwardable=True, role=Role.CONTROLLER),
        Api(31, "delete_acls", 1, 3, forwardable=True, role=Role.CONTROLLER),
        Api(32, "describe_configs", 1, 4),
        Api(33, "alter_configs", 0, 2, forwardable=True, role=Role.CONTROLLER),
        Api(34, "alter_replica_log_dirs", 0, 2),
        Api(35, "describe_log_dirs", 1, 4),
        Api(36, "sasl_authenticate", 0, 2),
        Api(37, "create_partitions", 0, 3, forwardable=True, role=Role.CONTROLLER),
        Api(38, "create_delegation_token", 0, 3, forwardable=True, role=Role.CONTROLLER),
        Api(39, "renew_delegation_token", 0, 2, forwardable=True, role=Role.CONTROLLER),
        Api(40, "expire_delegation_token", 0, 2, forwardable=True, role=Role.CONTROLLER),
        Api(41, "describe_delegation_token", 0, 3),
        Api(42, "delete_groups", 0, 2, role=Role.GROUP_COORDINATOR),
        Api(43, "elect_leaders", 0, 2, forwardable=True, role=Role.CONTROLLER),
        Api(44, "incremental_alter_configs", 0, 1, forwardable=True, role=Role.CONTROLLER),
        Api(45, "alter_partition_reassignments", 0, 0, forwardable=True, role=Role.CONTROLLER),
        Api(46, "list_partition_reassignments", 0, 0, forwardable=True, role=Role.CONTROLLER),
        Api(47, "offset_delete", 0, 0, role=Role.GROUP_COORDINATOR),
        Api(48, "describe_client_quotas", 0, 1),
        Api(49, "alter_client_quotas", 0, 1, forwardable=True, role=Role.CONTROLLER),
        Api(50, "describe_user_scram_credentials", 0, 0),
        Api(51, "alter_user_scram_credentials", 0, 0, forwardable=True, role=Role.CONTROLLER),
        Api(56, "alter_partition", 0, 3, role=Role.CONTROLLER),
        Api(57, "update_features", 0, 1, forwardable=True, role=Role.CONTROLLER),
        Api(58, "envelope", 0, 0, role=Role.CONTROLLER),
        Api(60, "describe_cluster", 0, 1),
        Api(61, "describe_producers", 0, 0, role=Role.LEADER),
        Api(65, "describe_transactions", 0, 0),
        Api(66, "list_transactions", 0, 0),
        Api(67, "allocate_producer_ids", 0, 0, role=Role.CONTROLLER),
    )
}


def lookup(key: int) -> Api | None:
    return TABLE.get(key)
