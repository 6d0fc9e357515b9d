"""The requests the active controller sends the brokers, built from its metadata cache (Kafka's
AbstractControllerBrokerRequestBatch.sendRequestsToBrokers, ZooKeeper mode, metadata version 3.9):
LeaderAndIsr v7 to a partition's replicas, UpdateMetadata v8 to every broker, StopReplica v4 to the
replicas of a deleted topic. Every one carries the controller's epoch and the receiver's broker
epoch (the czxid of its registration), which the receiver checks (fencing).
"""

from typing import TYPE_CHECKING, Iterable

from fauxka.zkstore import paths as zp

from .protocol.build import build
from .protocol.codec import request_schema

if TYPE_CHECKING:
    from .metadata_cache import MetadataCache

LEADER_AND_ISR_VERSION = 7
STOP_REPLICA_VERSION = 4
UPDATE_METADATA_VERSION = 8
LEADER_DURING_DELETE = -2  # LeaderAndIsr.LeaderDuringDelete: UpdateMetadata's mark of a deleted partition
# SecurityProtocol ids (UpdateMetadataEndpoint.SecurityProtocol)
_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}

Key = tuple[str, int]


def _by_topic(keys: Iterable[Key]) -> dict[str, list[int]]:
    topics: dict[str, list[int]] = {}
    for topic, p in sorted(keys):
        topics.setdefault(topic, []).append(p)
    return topics


def _header(controller_id: int, controller_epoch: int, broker_epoch: int) -> dict:
    return {"controller_id": controller_id, "is_kraft_controller": False, "controller_epoch": controller_epoch,
            "broker_epoch": broker_epoch}


def _known(cache: "MetadataCache", keys: Iterable[Key]):
    """(topic, partition, replicas, state, assignment) of the keys the cache holds a state for."""
    for topic, partitions in _by_topic(keys).items():
        assignment = cache.all_topics.get(topic)
        if assignment is None:
            continue
        for p in partitions:
            replicas = assignment.partitions.get(p)
            state = cache.partition_states.get((topic, p))
            if replicas is not None and state is not None:
                yield topic, p, replicas, state, assignment


def leader_and_isr(cache: "MetadataCache", controller_id: int, controller_epoch: int, broker_id: int,
                   broker_epoch: int, keys: Iterable[Key]):
    """LeaderAndIsr for the partitions among `keys` that `broker_id` holds a replica of; None if none.
    Type stays UNKNOWN (0), full or not: Kafka's ZooKeeper controller sets it only in a KRaft migration."""
    topics: dict[str, dict] = {}
    leaders: set[int] = set()
    for topic, p, replicas, state, assignment in _known(cache, keys):
        if broker_id not in replicas:
            continue
        entry = topics.setdefault(topic, {"topic_name": topic, "topic_id": assignment.topic_id,
                                          "partition_states": []})
        entry["partition_states"].append({
            "partition_index": p, "controller_epoch": state.controller_epoch, "leader": state.leader,
            "leader_epoch": state.leader_epoch, "isr": list(state.isr), "partition_epoch": state.zk_version,
            "replicas": list(replicas), "adding_replicas": list(assignment.adding.get(p, ())),
            "removing_replicas": list(assignment.removing.get(p, ())), "is_new": False,
            "leader_recovery_state": 0})
        leaders.add(state.leader)
    if not topics:
        return None
    live_leaders = []
    for leader in sorted(leaders):
        registration = cache.brokers.get(leader)
        endpoint = registration.endpoints[0] if registration and registration.endpoints else None
        if endpoint is not None:
            live_leaders.append({"broker_id": leader, "host_name": endpoint.host, "port": endpoint.port})
    return build(request_schema(4, LEADER_AND_ISR_VERSION), {
        **_header(controller_id, controller_epoch, broker_epoch), "type": 0,
        "topic_states": list(topics.values()), "live_leaders": live_leaders})


def update_metadata(cache: "MetadataCache", controller_id: int, controller_epoch: int, broker_epoch: int,
                    keys: Iterable[Key], deleted: dict[str, list[int]]):
    """UpdateMetadata with the states of `keys`, the partitions of `deleted` topics marked
    LeaderDuringDelete, and every registered broker."""
    topics: dict[str, dict] = {}
    live = set(cache.brokers)
    for topic, p, replicas, state, assignment in _known(cache, keys):
        entry = topics.setdefault(topic, {"topic_name": topic, "topic_id": assignment.topic_id,
                                          "partition_states": []})
        entry["partition_states"].append({
            "partition_index": p, "controller_epoch": state.controller_epoch, "leader": state.leader,
            "leader_epoch": state.leader_epoch, "isr": list(state.isr), "zk_version": state.zk_version,
            "replicas": list(replicas), "offline_replicas": [r for r in replicas if r not in live]})
    for topic, partitions in deleted.items():
        if topic in topics:
            continue  # created again since: its new partitions are in the request
        topics[topic] = {"topic_name": topic, "topic_id": None, "partition_states": [{
            "partition_index": p, "controller_epoch": controller_epoch, "leader": LEADER_DURING_DELETE,
            "leader_epoch": -1, "isr": [], "zk_version": -1, "replicas": [], "offline_replicas": []}
            for p in partitions]}
    brokers = []
    for broker_id, registration in sorted(cache.brokers.items()):
        brokers.append({"id": broker_id, "rack": registration.rack, "endpoints": [
            {"port": ep.port, "host": ep.host, "listener": ep.listener,
             "security_protocol": _PROTOCOL_IDS.get(ep.security_protocol, 0)} for ep in registration.endpoints]})
    return build(request_schema(6, UPDATE_METADATA_VERSION), {
        **_header(controller_id, controller_epoch, broker_epoch), "topic_states": list(topics.values()),
        "live_brokers": brokers})


def stop_replica(controller_id: int, controller_epoch: int, broker_epoch: int, deleted: dict[str, list[int]]):
    """StopReplica deleting the partitions of `deleted` topics (Kafka's TopicDeletionManager)."""
    return build(request_schema(5, STOP_REPLICA_VERSION), {
        **_header(controller_id, controller_epoch, broker_epoch),
        "topic_states": [{"topic_name": topic, "partition_states": [
            {"partition_index": p, "leader_epoch": -2, "delete_partition": True} for p in partitions]}
            for topic, partitions in sorted(deleted.items())]})


def assignment_replicas(assignment: zp.TopicAssignment) -> set[int]:
    return {r for replicas in assignment.partitions.values() for r in replicas}
