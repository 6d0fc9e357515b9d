"""OffsetFetch v0-v9.

v0 reads the offsets OffsetCommit v0 stored in ZooKeeper, not the coordinator's, as Kafka 3.9 in
ZK mode does (`handleOffsetFetchRequestFromZookeeper`; any broker answers): DESCRIBE on the Group
(else every partition GROUP_AUTHORIZATION_FAILED), DESCRIBE on each Topic (else
TOPIC_AUTHORIZATION_FAILED), a partition unknown to the metadata or without a stored offset is
offset -1 with no error; metadata is always empty. v1 reads the coordinator.
v2 top-level error_code and topics null = every committed partition; v3 throttle time;
v5 committed_leader_epoch; v6 flexible; v7 require_stable (KIP-447: UNSTABLE_OFFSET_COMMIT for a partition while a
commit of it is pending: a plain one being appended, a transactional one waiting for its marker);
v8 (KIP-709) several groups per request, each checked for its own coordinator; v9 member id/epoch
(KIP-848, ignored by classic groups). Authorization: DESCRIBE on the Group
(GROUP_AUTHORIZATION_FAILED), DESCRIBE on each Topic (unauthorized topics are left out of an
"all" answer, and answer TOPIC_AUTHORIZATION_FAILED when asked for).
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode, KafkaError

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .group_common import group_error

if TYPE_CHECKING:
    from ..protocol.requests import OffsetFetchRequest

_KEY = 9


def coordinator_key(request) -> str | None:
    # v0: ZooKeeper, any broker; v8+: checked per group below
    return request.body.group_id if 0 < request.version < 8 else None


def _fetch(ctx: RequestContext, group_id: str, topics, require_stable: bool = False) -> tuple[ErrorCode, list[dict]]:
    error = group_error(ctx, group_id, "DESCRIBE")
    if error is not None:
        return error, []
    asked = None if topics is None else [(t.name, p) for t in topics for p in t.partition_indexes]
    committed = ctx.groups.fetch_offsets(group_id, asked)
    unstable = ctx.groups.unstable_partitions(group_id) if require_stable else set()
    out: dict[str, list] = {}
    allowed: dict[str, bool] = {}
    for (topic, partition), c in committed.items():
        if topic not in allowed:
            allowed[topic] = ctx.authorized("DESCRIBE", "TOPIC", topic, log_if_denied=asked is not None)
        if not allowed[topic]:
            if asked is None:
                continue
            code = ErrorCode.topic_authorization_failed
        else:
            code = ErrorCode.unstable_offset_commit if (topic, partition) in unstable else ErrorCode.none
        out.setdefault(topic, []).append({
            "partition_index": partition, "error_code": code,
            "committed_offset": c.offset if c is not None and code == ErrorCode.none else -1,
            "committed_leader_epoch": c.leader_epoch if c is not None and code == ErrorCode.none else -1,
            "metadata": c.metadata if c is not None and code == ErrorCode.none else ""})
    return ErrorCode.none, [{"name": n, "partitions": ps} for n, ps in out.items()]


def _single(version: int, code, topics, asked=None):
    if code != ErrorCode.none and version < 2 and asked is not None:  # v1: the error on every partition
        topics = [{"name": t.name, "partitions": [{"partition_index": p, "committed_offset": -1,
                                                   "committed_leader_epoch": -1, "metadata": "",
                                                   "error_code": code} for p in t.partition_indexes]}
                  for t in asked]
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": code, "topics": topics})


async def handle(ctx: RequestContext, request: "OffsetFetchRequest") -> Response:
    version = ctx.version
    if version >= 8:
        answers = []
        for g in request.groups:
            code, topics = _fetch(ctx, g.group_id, g.topics, request.require_stable)
            answers.append({"group_id": g.group_id, "error_code": code, "topics": topics})
        return build(response_schema(_KEY, version), {"throttle_time": 0, "groups": answers})
    if version == 0:
        if not ctx.authorized("DESCRIBE", "GROUP", request.group_id):
            return _single(0, ErrorCode.group_authorization_failed, [], request.topics)
        return _single(0, ErrorCode.none, await _from_zookeeper(ctx, request.group_id, request.topics))
    code, topics = _fetch(ctx, request.group_id, request.topics, version >= 7 and request.require_stable)
    return _single(version, code, topics, request.topics)


async def _from_zookeeper(ctx: RequestContext, group_id: str, asked) -> list[dict]:
    topics = []
    for t in asked:
        allowed = ctx.authorized("DESCRIBE", "TOPIC", t.name)
        known = ctx.cache.partitions_of(t.name)
        partitions = []
        for p in t.partition_indexes:
            code, offset = ErrorCode.none, None
            if not allowed:
                code = ErrorCode.topic_authorization_failed
            elif p in known:
                try:
                    offset = await ctx.v0_offsets.fetch(group_id, t.name, p)
                except KafkaError as exc:  # Kafka: Errors.forException(e)
                    code = exc.code
            partitions.append({"partition_index": p, "error_code": code, "metadata": "",
                               "committed_offset": -1 if offset is None else offset, "committed_leader_epoch": -1})
        topics.append({"name": t.name, "partitions": partitions})
    return topics


def error_response(request, code):
    version, body = request.version, request.body
    if version >= 8:
        return build(response_schema(_KEY, version), {"throttle_time": 0, "groups": [
            {"group_id": g.group_id, "error_code": code, "topics": []} for g in body.groups]})
    return _single(version, code, [], body.topics)
