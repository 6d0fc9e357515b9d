"""Fetch v0-v17: translate to ReplicaManager.fetch and back.

Versions: v0-v1 get magic 0 message sets, v2-v3 magic 1 (down-converted as Kafka 3.x does in
`maybeConvertFetchedData`: fauxka/storage/down_convert.py; UNSUPPORTED_VERSION when the topic's
message.downconversion.enable is false; UNSUPPORTED_COMPRESSION_TYPE for a zstd topic or batch
before v10); v0-v2 have a hard size limit (no "at least one batch": a batch larger than the
partition's max bytes is not sent, Kafka's FetchParams.hardMaxBytesLimit); v0-v5 get
NOT_LEADER_OR_FOLLOWER for KAFKA_STORAGE_ERROR, which they may not know; v1 throttle_time; v3
max_bytes; v4 isolation_level and last_stable_offset/aborted_transactions; v5 log_start_offset;
v7 fetch sessions (KIP-227: fauxka/broker/replication/fetch_sessions.py); v9 current_leader_epoch
(KIP-320 fencing); v11 rack_id and preferred_read_replica (KIP-392: a consumer may read from a
follower, and a leader with replica.selector.class names the follower for its rack); v12 flexible,
last_fetched_epoch and diverging_epoch, current_leader; v13 topic ids instead of names
(UNKNOWN_TOPIC_ID); v15 replica_state replaces replica_id (KIP-903); v16 node_endpoints
(KIP-951); v17 replica_directory_id (KIP-853: a KRaft follower's directory, unused here). A
follower's fetch (replica_id >= 0) needs ClusterAction on the cluster; a consumer's
Read on each topic (TOPIC_AUTHORIZATION_FAILED). consumer_byte_rate: a consumer's max_bytes is capped
to what its quota allows in a window; over the quota the answer is empty with throttle_time_ms.
"""

import time
import uuid
from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode

from fauxka.storage.down_convert import down_convert
from fauxka.storage.errors import StorageError

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from ..replication.fetch_sessions import FetchSessionCache, SessionPartition
from ..replication.reads import READ_COMMITTED, ClientMetadata, FetchWant
from .cluster_answers import node_endpoints

if TYPE_CHECKING:
    from ..protocol.requests import FetchRequest

_KEY = 1
ZERO_UUID = uuid.UUID(int=0)
_LEADER_HINT = (ErrorCode.not_leader_or_follower, ErrorCode.fenced_leader_epoch)


async def handle(ctx: RequestContext, request: "FetchRequest") -> Response:
    version, cache = ctx.version, ctx.cache
    sessions = ctx.replicas.fetch_sessions
    error, session, full = sessions.begin(request.session_id, request.session_epoch) if version >= 7 else (
        ErrorCode.none, None, True)
    if error != ErrorCode.none:
        return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": error, "session_id": 0,
                                                      "responses": ()})
    taken_at = session.epoch if session is not None else 0
    replica_id = request.replica_state.replica_id if version >= 15 else request.replica_id
    follower = replica_id >= 0
    cluster_action = not follower or ctx.authorized("CLUSTER_ACTION", "CLUSTER", CLUSTER_NAME)
    readable: dict[str, bool] = {}
    refused: list[tuple[str | None, uuid.UUID, int, ErrorCode]] = []  # answered without reading
    wanted: dict[tuple[str, int], SessionPartition] = {}
    # a follower fetches what its LeaderAndIsr named, which this leader may not have heard of yet, or
    # hold before its UpdateMetadata announces the topic (Kafka checks the metadata cache for consumers
    # only): the read waits for it (fauxka/broker/replication/reads.py)
    known = _FollowedTopics(cache) if follower else cache.topics
    for topic in request.topics:
        name, topic_id, missing = _topic(cache, topic, version)
        if name is not None and name not in readable:
            readable[name] = cluster_action and (follower or ctx.authorized("READ", "TOPIC", name))
        for p in topic.partitions:
            if name is None or name not in known:
                refused.append((name, topic_id, p.partition, missing))
            elif not readable[name]:
                refused.append((name, topic_id, p.partition, ErrorCode.topic_authorization_failed))
            else:
                wanted[(name, p.partition)] = SessionPartition(
                    p.fetch_offset, p.partition_max_bytes, getattr(p, "current_leader_epoch", -1),
                    getattr(p, "last_fetched_epoch", -1), getattr(p, "log_start_offset", -1))
    if session is not None and not full:
        forgotten = [(_topic(cache, t, version)[0], p) for t in request.forgotten_topics_data for p in t.partitions]
        sessions.update(session, wanted, [k for k in forgotten if k[0] is not None])
        wanted = dict(session.partitions)
    elif session is not None:
        sessions.update(session, wanted, [])
    wants = [FetchWant(t, i, part.fetch_offset, part.max_bytes, part.current_leader_epoch, part.last_fetched_epoch,
                       part.log_start_offset) for (t, i), part in wanted.items()]
    isolation = int(request.isolation_level)
    max_bytes, min_bytes = request.max_bytes, request.min_bytes
    window_bytes = None if follower else ctx.quotas.fetch_window_bytes(ctx.principal, ctx.request.client_id or "")
    if window_bytes is not None:  # more than the quota allows in a window would certainly be throttled
        max_bytes = min(max_bytes, int(window_bytes))
        min_bytes = min(min_bytes, max_bytes)
    # KafkaApis: a Fetch v11+ carries the client's metadata; a consumer's may then be read from a follower
    client = ClientMetadata(request.rack_id or "", ctx.listener) if version >= 11 and not follower else None
    results = await ctx.replicas.fetch(wants, replica_id, isolation, int(request.max_wait.total_seconds() * 1000),
                                       min_bytes, max_bytes, version <= 2, client) if wants else []
    throttle = 0 if follower else _bandwidth_throttle(ctx, results)
    if throttle > 0:  # KafkaApis: an empty answer carrying the throttle time; the session stays as it was
        if session is not None and full:
            sessions.discard(session)
        return build(response_schema(_KEY, version), {
            "throttle_time": throttle, "error_code": ErrorCode.none,
            "session_id": session.id if session is not None and not full else 0, "responses": ()})
    # a later fetch of this session was taken while this one waited (its follower left it): the
    # answer goes nowhere, and what it would mark as sent the later one must still send
    superseded = session is not None and not full and FetchSessionCache.superseded(session, taken_at)
    topics: dict[tuple[str | None, uuid.UUID], list[dict]] = {}
    for name, topic_id, index, code in refused:
        topics.setdefault((name, topic_id), []).append(_partition(index, code))
    hinted: set[int] = set()
    for want, result in zip(wants, results):
        marks = (result.high_watermark, result.last_stable_offset, result.log_start_offset)
        part = wanted[(want.topic, want.index)]
        if version <= 5 and result.error == ErrorCode.kafka_storage_error:
            result.error = ErrorCode.not_leader_or_follower  # Kafka's maybeDownConvertStorageError
        if version < 10 and not follower:
            _convert(ctx.replicas, want, result, version)
        # changed() remembers what this answer sends (a full one's too: the next one sends only news)
        must = result.diverging_epoch is not None or result.preferred_read_replica >= 0
        news = (FetchSessionCache.changed(part, result.error, result.records, marks, must) if not superseded
                else bool(result.records) or result.error != ErrorCode.none or must)
        if news or full:
            topics.setdefault((want.topic, _topic_id(cache, want.topic)), []).append(
                _data(want.index, result, isolation, hinted))
    if session is not None and full:
        sessions.advance(session)
    return build(response_schema(_KEY, version), {
        "throttle_time": 0, "error_code": ErrorCode.none, "session_id": session.id if session is not None else 0,
        "responses": [{"topic": name or "", "topic_id": topic_id, "partitions": parts}
                      for (name, topic_id), parts in topics.items()],
        "node_endpoints": node_endpoints(ctx, hinted),
    })


def _convert(replicas, want, result, version: int) -> None:
    """Kafka's maybeConvertFetchedData for a consumer's fetch below v10 (no-op for v4+ unless zstd)."""
    partition = replicas.partitions.get((want.topic, want.index))
    config = partition.log.config if partition is not None else None
    if config is not None and config.compression_type == "zstd":
        result.error, result.records = ErrorCode.unsupported_compression_type, b""
    elif version <= 3 and result.error == ErrorCode.none:
        if config is not None and not config.message_downconversion_enable:
            result.error, result.records = ErrorCode.unsupported_version, b""
            return
        try:
            result.records, converted = down_convert(result.records, 0 if version <= 1 else 1, want.fetch_offset)
            replicas.metrics.converted(want.topic, "fetch", converted)
        except StorageError as exc:
            result.error, result.records = exc.code, b""


def _bandwidth_throttle(ctx: RequestContext, results) -> int:
    """consumer_byte_rate (KafkaApis.handleFetchRequest): a consumer's response bytes are recorded; over
    the quota the bytes are taken back and the answer is empty with the throttle time, the connection muted
    for it (KIP-219; the server mutes). Followers' fetches are not under client quotas. The size counted
    is the records' (Kafka counts the whole response: a few dozen bytes more per partition)."""
    size = sum(len(r.records or b"") for r in results)
    return ctx.quotas.record_fetch(ctx.principal, ctx.request.client_id or "", size, time.time() * 1000)


def _topic(cache, topic, version: int) -> tuple[str | None, uuid.UUID, ErrorCode]:
    """(name or None, topic id, the error for a missing topic) of a request's topic entry."""
    if version >= 13:
        topic_id = topic.topic_id or ZERO_UUID
        return cache.topic_by_id(topic_id), topic_id, ErrorCode.unknown_topic_id
    return topic.topic, _topic_id(cache, topic.topic), ErrorCode.unknown_topic_or_partition


class _FollowedTopics:
    """The topics a follower may fetch: any but those being deleted."""

    def __init__(self, cache):
        self._deleting = cache.deleting

    def __contains__(self, name: str) -> bool:
        return name not in self._deleting


def _topic_id(cache, name: str) -> uuid.UUID:
    assignment = cache.topics.get(name)
    return assignment.topic_id if assignment is not None and assignment.topic_id else ZERO_UUID


def _partition(index: int, error: ErrorCode) -> dict:
    return {"partition_index": index, "error_code": error, "high_watermark": -1, "last_stable_offset": -1,
            "log_start_offset": -1, "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}


def _data(index: int, result, isolation: int, hinted: set[int]) -> dict:
    entry = {
        "partition_index": index, "error_code": result.error, "high_watermark": result.high_watermark,
        "last_stable_offset": result.last_stable_offset, "log_start_offset": result.log_start_offset,
        # Kafka sends no aborted list to read_uncommitted consumers, an empty one without aborts
        "aborted_transactions": [{"producer_id": pid, "first_offset": first} for pid, first in result.aborted or ()]
        if isolation == READ_COMMITTED and result.error == ErrorCode.none else None,
        "preferred_read_replica": result.preferred_read_replica, "records": result.records,
    }
    if result.diverging_epoch is not None:
        entry["diverging_epoch"] = {"epoch": result.diverging_epoch[0], "end_offset": result.diverging_epoch[1]}
    if result.error in _LEADER_HINT and result.current_leader is not None:
        entry["current_leader"] = {"leader_id": result.current_leader[0], "leader_epoch": result.current_leader[1]}
        if result.current_leader[0] >= 0:
            hinted.add(result.current_leader[0])
    return entry
