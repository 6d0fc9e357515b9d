"""JoinGroup v0-v9 (fauxka/coordinator/group/rebalance.py answers; this module translates).

v1 adds rebalance_timeout (v0: the session timeout); v2 throttle time; v4 (KIP-394) a member
without an id gets MEMBER_ID_REQUIRED and an id to join with; v5 (KIP-345) group_instance_id;
v6 flexible; v7 protocol_type in the response (protocol_name nullable); v8 reason;
v9 skip_assignment (a static leader rejoining a Stable group need not assign again).
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
    from ..protocol.requests import JoinGroupRequest

_KEY = 11
coordinator_key = group_id_key


def _response(version: int, code, *, member_id: str = "", generation: int = -1, protocol_type=None, protocol=None,
              leader: str = "", members=(), skip_assignment: bool = False):
    if protocol is None and version < 7:
        protocol = ""
    return build(response_schema(_KEY, version), {
        "throttle_time": 0, "error_code": code, "generation_id": generation, "protocol_type": protocol_type,
        "protocol_name": protocol, "leader": leader, "skip_assignment": skip_assignment, "member_id": member_id,
        "members": [{"member_id": m, "group_instance_id": i, "metadata": md} for m, i, md in members]})


async def handle(ctx: RequestContext, request: "JoinGroupRequest") -> Response:
    version = ctx.version
    error = group_error(ctx, request.group_id)
    if error is not None:
        return _response(version, error, member_id=request.member_id)
    instance_id = request.group_instance_id if version >= 5 else None
    rebalance_ms = int(request.rebalance_timeout.total_seconds() * 1000) if version >= 1 else -1
    session_ms = int(request.session_timeout.total_seconds() * 1000)
    result = await ctx.groups.join(
        request.group_id, request.member_id, instance_id, ctx.request.client_id or "", f"/{ctx.client_host}",
        session_ms, rebalance_ms, request.protocol_type, [(p.name, p.metadata) for p in request.protocols],
        require_known_member_id=version >= 4, supports_skip_assignment=version >= 9)
    if result.error != ErrorCode.none:
        return _response(version, result.error, member_id=result.member_id)
    return _response(version, ErrorCode.none, member_id=result.member_id, generation=result.generation,
                     protocol_type=result.protocol_type, protocol=result.protocol, leader=result.leader,
                     members=result.members, skip_assignment=result.skip_assignment)


def error_response(request, code):
    return _response(request.version, code, member_id=request.body.member_id)
