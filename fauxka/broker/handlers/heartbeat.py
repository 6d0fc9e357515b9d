"""Heartbeat v0-v4: keeps a member's session; REBALANCE_IN_PROGRESS tells it to rejoin.

v1 throttle time; v3 group_instance_id (FENCED_INSTANCE_ID); v4 flexible.
Authorization: READ on the Group.
"""

from typing import TYPE_CHECKING

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .group_common import group_error, group_id_key

if TYPE_CHECKING:
    from ..protocol.requests import HeartbeatRequest

_KEY = 12
coordinator_key = group_id_key


async def handle(ctx: RequestContext, request: "HeartbeatRequest") -> Response:
    error = group_error(ctx, request.group_id)
    if error is None:
        error = ctx.groups.heartbeat(request.group_id, request.member_id,
                                     request.group_instance_id if ctx.version >= 3 else None, request.generation_id)
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "error_code": error})


def error_response(request, code):
    return build(response_schema(_KEY, request.version), {"throttle_time": 0, "error_code": code})
