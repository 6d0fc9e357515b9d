"""SyncGroup v0-v5: the leader's assignment, handed to every member of the generation.

v1 throttle time; v3 group_instance_id; v4 flexible; v5 protocol_type and protocol_name in the
request (checked: INCONSISTENT_GROUP_PROTOCOL) and the response. Authorization: READ on the Group.
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .group_common import group_error, group_id_key

if TYPE_CHECKING:
    from ..protocol.requests import SyncGroupRequest

_KEY = 14
coordinator_key = group_id_key


def _response(version: int, code, assignment: bytes = b"", protocol_type=None, protocol=None):
    return build(response_schema(_KEY, version), {"throttle_time": 0, "error_code": code, "assignment": assignment,
                                                   "protocol_type": protocol_type, "protocol_name": protocol})


async def handle(ctx: RequestContext, request: "SyncGroupRequest") -> Response:
    version = ctx.version
    error = group_error(ctx, request.group_id)
    if error is not None:
        return _response(version, error)
    result = await ctx.groups.sync(
        request.group_id, request.generation_id, request.member_id,
        request.group_instance_id if version >= 3 else None,
        request.protocol_type if version >= 5 else None, request.protocol_name if version >= 5 else None,
        {a.member_id: a.assignment for a in request.assignments})
    if result.error != ErrorCode.none:
        return _response(version, result.error)
    return _response(version, ErrorCode.none, result.assignment, result.protocol_type, result.protocol)


def error_response(request, code):
    return _response(request.version, code)
