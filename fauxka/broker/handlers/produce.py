"""Produce v0-v11: translate to ReplicaManager.append_records and back.

Versions: v0-v2 carry magic 0/1 message sets (storage converts them to one v2 batch, as Kafka 3.x's
LogValidator does; Kafka 3.9 does not check the magic of v0-v2 requests); v1 throttle_time; v2
log_append_time; v3 adds transactional_id and takes exactly one magic 2 batch (else INVALID_RECORD;
zstd from v7, else UNSUPPORTED_COMPRESSION_TYPE: fauxka/storage/validator.py produce_version_error); v5
log_start_offset; v8
record_errors and error_message (per-record errors such as a keyless record on a compacted topic);
v9 flexible; v10 current_leader with NOT_LEADER_OR_FOLLOWER and node_endpoints (KIP-951); v11
nothing new for a broker. v0-v2 are derived in protocol/old_versions.py. acks=0 gets no response at
all; when one of its partitions failed the connection is closed instead, as Kafka does, so that the
producer notices (KafkaApis.handleProduceRequest).
acks=all: once appended, only the wait for the in-sync replicas is left (Kafka's DelayedProduce);
the connection may then read its next Produce meanwhile (ctx.release_connection, server.py).
producer_byte_rate: the request's size is recorded after the append; throttle_time_ms answers it
and the connection is muted (KIP-219); acks=0 is muted without a response.
"""

import datetime
import time
from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode
from fauxka.storage.validator import produce_version_error

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .cluster_answers import node_endpoints

if TYPE_CHECKING:
    from ..protocol.requests import ProduceRequest
    from ..replication.replica_manager import ReplicaManager

_KEY = 0
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_LEADER_HINT = (ErrorCode.not_leader_or_follower, ErrorCode.fenced_leader_epoch)


async def handle(ctx: RequestContext, request: "ProduceRequest") -> Response:
    acks = int(request.acks)
    timeout_ms = int(request.timeout.total_seconds() * 1000)
    txn_refused = request.transactional_id is not None and not ctx.authorized(
        "WRITE", "TRANSACTIONAL_ID", request.transactional_id)
    # each topic entry's error as a whole (one ACL check per entry), then each partition's: its key,
    # its records and its error (None: appended), in the request's order
    topic_errors = [_topic_error(ctx, topic.name, txn_refused) for topic in request.topic_data]
    checked = [((topic.name, data.index), data.records or b"",
                error if error is not None else _partition_error(data.records, ctx.version, acks))
               for topic, error in zip(request.topic_data, topic_errors) for data in topic.partition_data]
    order = [key for key, _, _ in checked]
    errors = {key: error for key, _, error in checked if error is not None}
    entries = {key: records for key, records, error in checked if error is None}
    # acks=all: once appended, the connection may read the next Produce while this one waits (server.py)
    release = (lambda _results: ctx.release_connection()) if acks == -1 else None
    replicas: ReplicaManager = ctx.replicas
    results = await replicas.append_records(entries, acks, timeout_ms, on_appended=release) if entries else {}
    throttle = _bandwidth_throttle(ctx)
    if acks == 0:
        if errors or any(r.error != ErrorCode.none for r in results.values()):
            ctx.close_after_response()
        elif throttle > 0 and ctx.connection is not None:  # no response to carry it: the channel is muted
            ctx.connection.muted_until = max(ctx.connection.muted_until, time.monotonic() + throttle / 1000)
        return None
    return _response(ctx, order, errors, results, throttle)


def _topic_error(ctx: RequestContext, name: str, txn_refused: bool) -> ErrorCode | None:
    if txn_refused:
        return ErrorCode.transactional_id_authorization_failed
    if not ctx.authorized("WRITE", "TOPIC", name):
        return ErrorCode.topic_authorization_failed
    if name not in ctx.cache.topics:
        return ErrorCode.unknown_topic_or_partition
    return None


def _partition_error(records: bytes | None, version: int, acks: int) -> ErrorCode | None:
    refused = produce_version_error(records, version)
    if refused is not None:
        return refused.code
    if acks not in (-1, 0, 1):
        return ErrorCode.invalid_required_acks
    return None


def _bandwidth_throttle(ctx: RequestContext) -> int:
    """producer_byte_rate: after the append Kafka records the request's size (request.sizeInBytes) and
    answers with the throttle time; the server mutes the connection for it (KIP-219). acks=0 is throttled
    too, by muting alone (sendNoOpResponseExemptThrottle)."""
    return ctx.quotas.record_produce(ctx.principal, ctx.request.client_id or "", len(ctx.request.frame),
                                     time.time() * 1000)


def _response(ctx: RequestContext, order, errors, results, throttle: int = 0):
    replicas = ctx.replicas
    topics: dict[str, list[dict]] = {}
    hinted: set[int] = set()
    for key in order:
        result = results.get(key)
        error = errors.get(key, result.error if result is not None else ErrorCode.none)
        entry = {"index": key[1], "error_code": error, "base_offset": -1, "log_append_time": None,
                 "log_start_offset": -1, "record_errors": (), "error_message": None}
        if result is not None:
            entry.update(base_offset=result.base_offset, log_start_offset=result.log_start_offset,
                         error_message=result.error_message,
                         record_errors=[{"batch_index": i, "batch_index_error_message": m}
                                        for i, m in result.record_errors])
            if result.log_append_time >= 0:
                entry["log_append_time"] = _EPOCH + datetime.timedelta(milliseconds=result.log_append_time)
        if error in _LEADER_HINT:
            leader, epoch = replicas.current_leader(*key)
            entry["current_leader"] = {"leader_id": leader, "leader_epoch": epoch}
            if leader >= 0:
                hinted.add(leader)
        topics.setdefault(key[0], []).append(entry)
    return build(response_schema(_KEY, ctx.version), {
        "responses": [{"name": name, "partition_responses": parts} for name, parts in topics.items()],
        "throttle_time": throttle,
        "node_endpoints": node_endpoints(ctx, hinted),
    })
