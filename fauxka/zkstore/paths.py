"""Kafka's ZooKeeper paths and JSON payloads (ZK mode, as in kafka.zk.ZkData)."""

import base64
import json
import time
import uuid
from dataclasses import dataclass, field

BROKER_IDS = "/brokers/ids"
BROKER_SEQUENCE_ID = "/brokers/seqid"  # its data version numbers generated broker ids
TOPICS = "/brokers/topics"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
CLUSTER_ID = "/cluster/id"
DELETE_TOPICS = "/admin/delete_topics"
CONFIG_CHANGES = "/config/changes"
CONFIG = "/config"  # entity configs: /config/<entity type>/<name> (topics, brokers, users, clients, ips)
LATEST_PRODUCER_ID_BLOCK = "/latest_producer_id_block"  # ProducerIdBlockZNode
# Delegation tokens (DelegationTokensZNode, DelegationTokenChangeNotificationZNode).
DELEGATION_TOKENS = "/delegation_token/tokens"
DELEGATION_TOKEN_CHANGES = "/delegation_token/token_changes"
TOKEN_CHANGE_PREFIX = f"{DELEGATION_TOKEN_CHANGES}/token_change_"
# ACLs (ZkAclStore, ExtendedAclStore, ZkAclChangeStore): LITERAL patterns under ACL_LITERAL_ROOT,
# PREFIXED ones under ACL_PREFIXED_ROOT (the pattern type's name in lower case).
ACL_LITERAL_ROOT = "/kafka-acl"
ACL_EXTENDED_ROOT = "/kafka-acl-extended"
ACL_PREFIXED_ROOT = f"{ACL_EXTENDED_ROOT}/prefixed"
ACL_LITERAL_CHANGES = "/kafka-acl-changes"
ACL_EXTENDED_CHANGES = "/kafka-acl-extended-changes"
ACL_CHANGE_PREFIX = "acl_changes_"
# fauxka's own (outside Kafka's layout), for cluster-consistent blocking: the controller bumps
# the version of METADATA_VERSION in every write; each broker publishes, in its ephemeral
# APPLIED/<id>, the highest such version its metadata cache has fully applied.
METADATA_VERSION = "/fauxka/metadata_version"
APPLIED = "/fauxka/applied"
# Injected faults (fauxka/model/faults.py): one persistent znode per fault, FAULTS/<id>, JSON.
FAULTS = "/fauxka/faults"
# FAULTS_SEEN/<id>: ephemeral, JSON {"faults": [ids], "tracing": bool}, what the broker obeys now
# (fauxka.testing waits on it before going on)
FAULTS_SEEN = "/fauxka/faults_seen"
TRACE = "/fauxka/trace"  # exists: every broker records the requests it answers (fauxka.trace.file)

# What a Kafka broker creates at start-up when missing.
PERSISTENT_PATHS = (
    "/consumers", BROKER_IDS, TOPICS, BROKER_SEQUENCE_ID, CONFIG_CHANGES, f"{CONFIG}/topics",
    f"{CONFIG}/clients", f"{CONFIG}/users", f"{CONFIG}/brokers", f"{CONFIG}/ips", DELETE_TOPICS,
    "/isr_change_notification", LATEST_PRODUCER_ID_BLOCK, "/log_dir_event_notification",
    METADATA_VERSION, APPLIED, FAULTS,
)


def layout_paths() -> list[str]:
    """PERSISTENT_PATHS with their parents, each parent before its children: a fresh ZooKeeper's
    layout as one multi-op of creates (one round trip, one transaction-log write)."""
    every = {"/".join(path.split("/")[:n]) for path in PERSISTENT_PATHS for n in range(2, path.count("/") + 2)}
    return sorted(every, key=lambda path: (path.count("/"), path))


def applied_path(broker_id: int) -> str:
    return f"{APPLIED}/{broker_id}"


def faults_seen_path(broker_id: int) -> str:
    return f"{FAULTS_SEEN}/{broker_id}"


def fault_path(fault_id: str) -> str:
    return f"{FAULTS}/{fault_id}"


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def partitions_path(topic: str) -> str:
    return f"{TOPICS}/{topic}/partitions"


def partition_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{partition}"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{TOPICS}/{topic}/partitions/{partition}/state"


def _now_ms() -> str:
    return str(int(time.time() * 1000))


def _json(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def uuid_to_kafka(u: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(u.bytes).rstrip(b"=").decode()


def uuid_from_kafka(s: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)))


# --- brokers -----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    listener: str
    host: str
    port: int
    security_protocol: str


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    broker_id: int
    endpoints: tuple[BrokerEndpoint, ...]
    rack: str | None = None
    features: dict = field(default_factory=dict)

    def endpoint(self, listener: str) -> BrokerEndpoint | None:
        return next((ep for ep in self.endpoints if ep.listener == listener), None)


def encode_broker(reg: BrokerRegistration) -> bytes:
    plaintext = next((ep for ep in reg.endpoints if ep.security_protocol == "PLAINTEXT"), None)
    payload = {
        "features": reg.features,
        "listener_security_protocol_map": {ep.listener: ep.security_protocol for ep in reg.endpoints},
        "endpoints": [f"{ep.listener}://{_host(ep.host)}:{ep.port}" for ep in reg.endpoints],
        "jmx_port": -1,
        "port": plaintext.port if plaintext else -1,
        "host": plaintext.host if plaintext else None,
        "version": 5,
        "timestamp": _now_ms(),
    }
    if reg.rack is not None:
        payload["rack"] = reg.rack
    return _json(payload)


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def decode_broker(broker_id: int, data: bytes) -> BrokerRegistration:
    payload = json.loads(data)
    protocols = payload.get("listener_security_protocol_map") or {}
    endpoints = []
    for uri in payload.get("endpoints", []):
        listener, _, rest = uri.partition("://")
        host, _, port = rest.rpartition(":")
        endpoints.append(BrokerEndpoint(listener, host.strip("[]"), int(port), protocols.get(listener, listener)))
    return BrokerRegistration(broker_id, tuple(endpoints), payload.get("rack"), payload.get("features") or {})


# --- controller --------------------------------------------------------------

def encode_controller(broker_id: int) -> bytes:
    return _json({"version": 1, "brokerid": broker_id, "timestamp": _now_ms()})


def decode_controller(data: bytes) -> int:
    return int(json.loads(data)["brokerid"])


def encode_epoch(epoch: int) -> bytes:
    return str(epoch).encode()


def decode_epoch(data: bytes) -> int:
    return int(data.decode())


# --- cluster id --------------------------------------------------------------

def new_cluster_id() -> str:
    return uuid_to_kafka(uuid.uuid4())


def encode_cluster_id(cluster_id: str) -> bytes:
    return _json({"version": "1", "id": cluster_id})


def decode_cluster_id(data: bytes) -> str:
    return json.loads(data)["id"]


# --- topics ------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TopicAssignment:
    topic_id: uuid.UUID | None
    partitions: dict[int, list[int]]  # partition -> replicas (during a reassignment: target + origin)
    # KIP-455: the partitions being reassigned, with the replicas being added and removed
    # (TopicZNode's "adding_replicas" / "removing_replicas"); empty when nothing is reassigned.
    adding: dict[int, list[int]] = field(default_factory=dict)
    removing: dict[int, list[int]] = field(default_factory=dict)

    def reassigning(self) -> set[int]:
        """The partitions with a reassignment in progress (ReplicaAssignment.isBeingReassigned)."""
        return {p for p in self.partitions if self.adding.get(p) or self.removing.get(p)}


def encode_topic(assignment: TopicAssignment) -> bytes:
    """TopicZNode.encode: only the partitions being reassigned appear under adding/removing."""
    payload = {
        "version": 3,
        "partitions": {str(p): r for p, r in sorted(assignment.partitions.items())},
        "adding_replicas": {str(p): r for p, r in sorted(assignment.adding.items()) if r},
        "removing_replicas": {str(p): r for p, r in sorted(assignment.removing.items()) if r},
    }
    if assignment.topic_id is not None:
        payload["topic_id"] = uuid_to_kafka(assignment.topic_id)
    return _json(payload)


def decode_topic(data: bytes) -> TopicAssignment:
    payload = json.loads(data)
    topic_id = payload.get("topic_id")
    partitions = {int(p): list(r) for p, r in payload.get("partitions", {}).items()}

    def per_partition(key: str) -> dict[int, list[int]]:
        return {int(p): list(r) for p, r in (payload.get(key) or {}).items() if r and int(p) in partitions}

    return TopicAssignment(uuid_from_kafka(topic_id) if topic_id else None, partitions,
                           per_partition("adding_replicas"), per_partition("removing_replicas"))


@dataclass(frozen=True, slots=True)
class PartitionState:
    leader: int
    leader_epoch: int
    controller_epoch: int
    isr: list[int]
    # The state znode's Stat.version: Kafka's partition epoch (LeaderAndIsr.partitionEpoch), which
    # every conditional write of the znode expects and AlterPartition's partition_epoch names.
    # Not part of the JSON; compare=False keeps equality about the content.
    zk_version: int = field(default=0, compare=False)


def encode_partition_state(state: PartitionState) -> bytes:
    return _json({
        "controller_epoch": state.controller_epoch,
        "leader": state.leader,
        "version": 1,
        "leader_epoch": state.leader_epoch,
        "isr": state.isr,
    })


def decode_partition_state(data: bytes, zk_version: int = 0) -> PartitionState:
    p = json.loads(data)
    return PartitionState(int(p["leader"]), int(p["leader_epoch"]), int(p["controller_epoch"]), list(p["isr"]),
                          zk_version)


# --- producer id blocks -----------------------------------------------------------

PRODUCER_ID_BLOCK_SIZE = 1000  # ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE


@dataclass(frozen=True, slots=True)
class ProducerIdBlock:
    broker: int
    block_start: int
    block_end: int  # inclusive


def encode_producer_id_block(block: ProducerIdBlock) -> bytes:
    """ProducerIdBlockZNode.generateProducerIdBlockJson."""
    return _json({"version": 1, "broker": block.broker, "block_start": str(block.block_start),
                  "block_end": str(block.block_end)})


def decode_producer_id_block(data: bytes) -> ProducerIdBlock | None:
    """None for the empty znode Kafka creates at start-up. Kafka writes the bounds as JSON strings
    and reads numbers or strings."""
    if not data:
        return None
    p = json.loads(data)
    return ProducerIdBlock(int(p["broker"]), int(p["block_start"]), int(p["block_end"]))


# --- entity configs ------------------------------------------------------------

def entity_configs_path(entity_type: str) -> str:
    """The parent of every config of one entity type: topics | brokers | users | clients | ips."""
    return f"{CONFIG}/{entity_type}"


def entity_config_path(entity_type: str, name: str) -> str:
    """entity_type: topics | brokers | users | clients | ips (for a user's client: users, <user>/clients/<id>)."""
    return f"{CONFIG}/{entity_type}/{name}"


def user_clients_path(user: str) -> str:
    """The parent of one (sanitized) user's per-client quota configs."""
    return f"{CONFIG}/users/{user}/clients"


# --- delegation tokens and ACLs ----------------------------------------------------

def token_path(token_id: str) -> str:
    return f"{DELEGATION_TOKENS}/{token_id}"


def acl_type_path(store_root: str, resource_type: str) -> str:
    """An ACL store's node of one resource type (its PascalCase name, e.g. Topic)."""
    return f"{store_root}/{resource_type}"


def encode_entity_config(config: dict[str, str]) -> bytes:
    return _json({"version": 1, "config": config})


def decode_entity_config(data: bytes) -> dict[str, str]:
    return dict(json.loads(data).get("config") or {})


def encode_config_change(entity_path: str) -> bytes:
    return _json({"version": 2, "entity_path": entity_path})


CONFIG_CHANGE_PREFIX = f"{CONFIG_CHANGES}/config_change_"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS}/{topic}"


# --- finalized features (KIP-584: FeatureZNode) -------------------------------------

FEATURE = "/feature"
FEATURE_ENABLED = 1  # FeatureZNodeStatus.Enabled (0: Disabled)


def encode_feature(features: dict[str, int], status: int = FEATURE_ENABLED) -> bytes:
    """FeatureZNode.encode, version 2 (IBP 3.3+): only max_version_level per feature."""
    return _json({"features": {name: {"max_version_level": level} for name, level in features.items()},
                  "version": 2, "status": status})


def decode_feature(data: bytes) -> tuple[int, dict[str, int]]:
    """(status, finalized levels) of a FeatureZNode (version 1 or 2). ValueError when malformed."""
    payload = json.loads(data)
    if payload.get("version") not in (1, 2) or payload.get("status") not in (0, 1):
        raise ValueError(f"unsupported feature znode: {data[:200]!r}")
    return int(payload["status"]), {name: int(info["max_version_level"])
                                    for name, info in (payload.get("features") or {}).items()}
