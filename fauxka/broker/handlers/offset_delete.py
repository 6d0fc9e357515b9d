"""OffsetDelete v0 (KIP-496): a group's committed offsets for some partitions go.

Top-level GROUP_AUTHORIZATION_FAILED without DELETE on the Group; GROUP_ID_NOT_FOUND; NON_EMPTY_GROUP
for a non-empty group that is not a consumer group; per partition TOPIC_AUTHORIZATION_FAILED without
READ on the Topic, GROUP_SUBSCRIBED_TO_TOPIC while a member subscribes to it.
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .group_common import group_error, group_id_key

if TYPE_CHECKING:
    from ..protocol.requests import OffsetDeleteRequest

_KEY = 47
coordinator_key = group_id_key


def _answer(code, results: dict, order):
    topics: dict[str, list] = {}
    for tp in order:
        if tp in results:
            topics.setdefault(tp[0], []).append({"partition_index": tp[1], "error_code": results[tp]})
    return build(response_schema(_KEY, 0), {"throttle_time": 0, "error_code": code,
                                             "topics": [{"name": n, "partitions": ps} for n, ps in topics.items()]})


async def handle(ctx: RequestContext, request: "OffsetDeleteRequest") -> Response:
    order = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    error = group_error(ctx, request.group_id, "DELETE")
    if error is not None:
        return _answer(error, {}, order)
    results = {}
    wanted = []
    for topic in request.topics:
        authorized = ctx.authorized("READ", "TOPIC", topic.name)
        for p in topic.partitions:
            if authorized:
                wanted.append((topic.name, p.partition_index))
            else:
                results[(topic.name, p.partition_index)] = ErrorCode.topic_authorization_failed
    top, per = await ctx.groups.delete_offsets(request.group_id, wanted)
    if top != ErrorCode.none:
        return _answer(top, {}, order)
    results.update(per)
    return _answer(ErrorCode.none, results, order)


def error_response(request, code):
    return _answer(code, {}, [])
