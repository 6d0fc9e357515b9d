"""LeaveGroup v0-v5: members leave at once instead of waiting for their session to expire.

v0-v2 one member_id (the top-level error is that member's); v1 throttle time; v3 (KIP-345) a
batch of members with group_instance_id, each answered; v4 flexible; v5 a reason per member.
Authorization: READ on the Group.
"""

from typing import TYPE_CHECKING

from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response
from .group_common import group_error, group_id_key

if TYPE_CHECKING:
    from ..protocol.requests import LeaveGroupRequest

_KEY = 13
coordinator_key = group_id_key


def _members(request, version: int) -> list[tuple[str, str | None]]:
    if version < 3:
        return [(request.member_id, None)]
    return [(m.member_id, m.group_instance_id) for m in request.members]


async def handle(ctx: RequestContext, request: "LeaveGroupRequest") -> Response:
    version = ctx.version
    members = _members(request, version)
    error = group_error(ctx, request.group_id)
    if error is not None:
        return _answer(version, error, members, [])
    top, errors = ctx.groups.leave(request.group_id, members)
    return _answer(version, top, members, errors)


def _answer(version: int, top, members, errors):
    if version < 3 and top == ErrorCode.none and errors:
        top = errors[0]
    return build(response_schema(_KEY, version), {
        "throttle_time": 0, "error_code": top,
        "members": [{"member_id": m, "group_instance_id": i, "error_code": e}
                    for (m, i), e in zip(members, errors)]})


def error_response(request, code):
    return _answer(request.version, code, _members(request.body, request.version), [])
