"""DeleteGroups v0-v2 (KIP-229): empty groups and their offsets go (tombstones in __consumer_offsets).

v1 throttle time semantics only; v2 flexible. Per group: GROUP_AUTHORIZATION_FAILED without DELETE on
the Group, NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP.
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .group_common import group_error

if TYPE_CHECKING:
    from ..protocol.requests import DeleteGroupsRequest

_KEY = 42


async def handle(ctx: RequestContext, request: "DeleteGroupsRequest") -> Response:
    results: dict[str, ErrorCode] = {}
    deletable = []
    for group_id in request.groups_names:
        error = group_error(ctx, group_id, "DELETE")
        if error is not None:
            results[group_id] = error
        else:
            deletable.append(group_id)
    if deletable:
        results.update(await ctx.groups.delete_groups(deletable))
    return build(response_schema(_KEY, ctx.version), {
        "throttle_time": 0, "results": [{"group_id": g, "error_code": results[g]} for g in request.groups_names]})


def error_response(request, code):
    return build(response_schema(_KEY, request.version), {
        "throttle_time": 0, "results": [{"group_id": g, "error_code": code} for g in request.body.groups_names]})
