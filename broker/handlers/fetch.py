"""Fetch v4-v16: translate to ReplicaManager.fetch and back.

Versions: v4 isolation_level and last_stable_offset/aborted_transactions; v5 log_start_offset;
v7 fetch sessions (KIP-227); v9 current_leader_epoch (KIP-320 fencing); v11 rack_id (KIP-392);
v12 flexible, last_fetched_epoch and diverging_epoch, current_leader; v13 topic ids instead of
names (UNKNOWN_TOPIC_ID); v15 replica_state replaces replica_id (KIP-903); v16 node_endpoints
(KIP-951). Sessions: this broker creates none (session_id 0 in every answer), which KIP-227
allows: clients then send full fetches. A fetch naming a session gets
FETCH_SESSION_ID_NOT_FOUND; session 0 with an epoch other than -1 or 0 INVALID_FETCH_SESSION_EPOCH.
A follower's fetch (replica_id >= 0) needs ClusterAction on the cluster.
"""

import uuid

from model.acl_model import CLUSTER_NAME
from model.errors import ErrorCode

from ..protocol.build import build
from ..protocol.codec import response_schema
from ..replication.reads import READ_COMMITTED, FetchWant
from .produce import node_endpoints

_KEY = 1
ZERO_UUID = uuid.UUID(int=0)
_LEADER_HINT = (ErrorCode.not_leader_or_follower, ErrorCode.fenced_leader_epoch)


async def handle(ctx, request):
    version = ctx.version
    if request.session_id != 0 or request.session_epoch not in (-1, 0):
        code = ErrorCode.fetch_session_id_not_found if request.session_id != 0 else ErrorCode.invalid_fetch_session_epoch
        return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": code, "session_id": 0,
                                                      "responses": ()})
    replica_id = request.replica_state.replica_id if version >= 15 else request.replica_id
    follower = replica_id >= 0
    cluster_action = not follower or ctx.authorized("CLUSTER_ACTION", "CLUSTER", CLUSTER_NAME)
    isolation = int(request.isolation_level)
    cache = ctx.cache
    slots: list[tuple[str | None, uuid.UUID, list]] = []  # per topic: name, id, [(index, error | want)]
    wants: list[FetchWant] = []
    readable: dict[str, bool] = {}
    for topic in request.topics:
        if version >= 13:
            topic_id = topic.topic_id or ZERO_UUID
            name = cache.topic_by_id(topic_id)
            missing = ErrorCode.unknown_topic_id
        else:
            name, missing = topic.topic, ErrorCode.unknown_topic_or_partition
            assignment = cache.topics.get(name)
            topic_id = assignment.topic_id if assignment and assignment.topic_id else ZERO_UUID
        if name is not None and name not in readable:
            readable[name] = cluster_action and (follower or ctx.authorized("READ", "TOPIC", name))
        entries = []
        for p in topic.partitions:
            if name is None or name not in cache.topics:
                entries.append((p.partition, missing))
            elif not readable[name]:
                entries.append((p.partition, ErrorCode.topic_authorization_failed))
            else:
                want = FetchWant(name, p.partition, p.fetch_offset, p.partition_max_bytes,
                                 getattr(p, "current_leader_epoch", -1), getattr(p, "last_fetched_epoch", -1))
                wants.append(want)
                entries.append((p.partition, want))
        slots.append((name, topic_id, entries))
    max_wait_ms = int(request.max_wait.total_seconds() * 1000)
    results = await ctx.broker.replicas.fetch(wants, replica_id, isolation, max_wait_ms, request.min_bytes,
                                              request.max_bytes) if wants else []
    by_want = {id(w): r for w, r in zip(wants, results)}
    hinted: set[int] = set()
    responses = []
    for name, topic_id, entries in slots:
        partitions = []
        for index, outcome in entries:
            if isinstance(outcome, ErrorCode):
                partitions.append(_partition(index, outcome))
                continue
            partitions.append(_data(index, by_want[id(outcome)], isolation, hinted))
        responses.append({"topic": name or "", "topic_id": topic_id, "partitions": partitions})
    return build(response_schema(_KEY, version), {
        "throttle_time": 0, "error_code": ErrorCode.none, "session_id": 0, "responses": responses,
        "node_endpoints": node_endpoints(ctx, hinted),
    })


def _partition(index: int, error: ErrorCode) -> dict:
    return {"partition_index": index, "error_code": error, "high_watermark": -1, "last_stable_offset": -1,
            "log_start_offset": -1, "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}


def _data(index: int, result, isolation: int, hinted: set[int]) -> dict:
    entry = {
        "partition_index": index, "error_code": result.error, "high_watermark": result.high_watermark,
        "last_stable_offset": result.last_stable_offset, "log_start_offset": result.log_start_offset,
        # Kafka sends no aborted list to read_uncommitted consumers, an empty one without aborts
        "aborted_transactions": () if isolation == READ_COMMITTED and result.error == ErrorCode.none else None,
        "preferred_read_replica": -1, "records": result.records,
    }
    if result.diverging_epoch is not None:
        entry["diverging_epoch"] = {"epoch": result.diverging_epoch[0], "end_offset": result.diverging_epoch[1]}
    if result.error in _LEADER_HINT and result.current_leader is not None:
        entry["current_leader"] = {"leader_id": result.current_leader[0], "leader_epoch": result.current_leader[1]}
        if result.current_leader[0] >= 0:
            hinted.add(result.current_leader[0])
    return entry
