"""OffsetCommit v0-v9.

v0 stores offsets in ZooKeeper, not in the group coordinator, as Kafka 3.9 in ZK mode does
(`commitOffsetsToZookeeper`: /consumers/<group>/offsets/<topic>/<partition>, fauxka/zkstore/
consumer_offsets.py; any broker answers, no member or generation; metadata longer than
offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE, the metadata itself is not kept; Kafka 4.0
removed v0-v1). v1 goes to the coordinator with generation and member id, and a per-partition
commit_timestamp (-1: now) that becomes the offset's commit time. v2-v4 retention_time (an expire timestamp when not -1: OffsetCommitValue v1); v3 throttle time;
v5 drops retention_time; v6 committed_leader_epoch; v7 (KIP-345) group_instance_id; v8 flexible;
v9 is v8 (KIP-848's new protocol; a classic group answers as v8).
Authorization (KafkaApis.handleOffsetCommitRequest): READ on the Group, else every partition
GROUP_AUTHORIZATION_FAILED; READ on each Topic (TOPIC_AUTHORIZATION_FAILED); an unknown topic
or partition UNKNOWN_TOPIC_OR_PARTITION.
"""

import functools
import time
from typing import TYPE_CHECKING

from fauxka.coordinator.group.coordinator import OffsetRequest
from fauxka.model.errors import ErrorCode, KafkaError

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .group_common import group_error, group_id_key, offsets_to_commit

if TYPE_CHECKING:
    from ..protocol.requests import OffsetCommitRequest

_KEY = 8


def coordinator_key(request) -> str | None:
    return group_id_key(request) if request.version > 0 else None  # v0: ZooKeeper, any broker


def _answer(version: int, results: dict[tuple[str, int], ErrorCode], order: list[tuple[str, int]]):
    return _response(version, tuple((tp, results[tp]) for tp in order))


@functools.lru_cache(maxsize=1024)
def _response(version: int, results: tuple[tuple[tuple[str, int], ErrorCode], ...]):
    """The same partitions with the same errors get the same (immutable) answer: built once."""
    topics: dict[str, list] = {}
    for tp, code in results:
        topics.setdefault(tp[0], []).append({"partition_index": tp[1], "error_code": code})
    return build(response_schema(_KEY, version), {
        "throttle_time": 0, "topics": [{"name": n, "partitions": ps} for n, ps in topics.items()]})


def _partitions(request) -> list[tuple[str, int]]:
    return [(t.name, p.partition_index) for t in request.topics for p in t.partitions]


async def handle(ctx: RequestContext, request: "OffsetCommitRequest") -> Response:
    version = ctx.version
    order = _partitions(request)
    error = group_error(ctx, request.group_id, coordinator=version > 0)
    if error is not None:
        return _answer(version, dict.fromkeys(order, error), order)
    expire = -1
    if 2 <= version <= 4:
        retention = int(request.retention_time.total_seconds() * 1000)
        expire = -1 if retention == -1 else int(time.time() * 1000) + retention
    epoch = version >= 6
    results, wanted = offsets_to_commit(ctx, request.topics, lambda p: OffsetRequest(
        p.committed_offset, p.committed_leader_epoch if epoch else -1, p.committed_metadata, expire,
        p.commit_timestamp if version == 1 else -1))
    if wanted and version == 0:  # commitOffsetsToZookeeper
        limit = ctx.config["offset.metadata.max.bytes"]
        for tp, req in wanted.items():
            if req.metadata is not None and len(req.metadata) > limit:
                results[tp] = ErrorCode.offset_metadata_too_large
                continue
            try:
                await ctx.v0_offsets.commit(request.group_id, tp[0], tp[1], req.offset)
                results[tp] = ErrorCode.none
            except KafkaError as exc:  # Kafka: Errors.forException(e), an unexpected one
                results[tp] = exc.code
    elif wanted:
        results.update(await ctx.groups.commit_offsets(
            request.group_id, request.member_id, request.group_instance_id if version >= 7 else None,
            request.generation_id_or_member_epoch, wanted))
    return _answer(version, results, order)


def error_response(request, code):
    order = _partitions(request.body)
    return _answer(request.version, dict.fromkeys(order, code), order)
