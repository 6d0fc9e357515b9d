"""DescribeGroups v0-v5: state, protocol and members of each group this broker coordinates.

v1 throttle time; v3 authorized_operations (KIP-430; -2^31 unless asked for); v4
group_instance_id; v5 flexible. A group elsewhere answers NOT_COORDINATOR, one being loaded
COORDINATOR_LOAD_IN_PROGRESS, an unknown one state "Dead" with no error (GroupCoordinator.handleDescribeGroup).
Member metadata and assignment only in Stable (GroupMetadata.summary). Authorization: DESCRIBE on the Group.
"""

from typing import TYPE_CHECKING

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import RequestParseError, response_schema
from ..protocol.requests import Response
from .group_common import coordinator_error

if TYPE_CHECKING:
    from ..protocol.requests import DescribeGroupsRequest

_KEY = 15
_OMITTED = -(2**31)


def _empty(group_id: str, code) -> dict:
    return {"error_code": code, "group_id": group_id, "group_state": "", "protocol_type": "", "protocol_data": "",
            "members": [], "authorized_operations": _OMITTED}


async def handle(ctx: RequestContext, request: "DescribeGroupsRequest") -> Response:
    if request.groups is None:  # a null non-nullable array: Kafka's parser refuses it and closes
        raise RequestParseError("non-nullable field groups was serialized as null")
    answers = []
    for group_id in request.groups:
        if not ctx.authorized("DESCRIBE", "GROUP", group_id):
            answers.append(_empty(group_id, 30))  # GROUP_AUTHORIZATION_FAILED
            continue
        error = coordinator_error(ctx, group_id)
        if error is not None:
            answers.append(_empty(group_id, error))
            continue
        d = ctx.groups.describe(group_id)
        ops = (ctx.authorized_operations("GROUP", group_id)
               if ctx.version >= 3 and request.include_authorized_operations else _OMITTED)
        answers.append({
            "error_code": 0, "group_id": group_id, "group_state": d.state, "protocol_type": d.protocol_type,
            "protocol_data": d.protocol, "authorized_operations": ops,
            "members": [{"member_id": m, "group_instance_id": i, "client_id": c, "client_host": h,
                         "member_metadata": md, "member_assignment": a} for m, i, c, h, md, a in d.members]})
    return build(response_schema(_KEY, ctx.version), {"throttle_time": 0, "groups": answers})


def error_response(request, code):
    """DescribeGroupsRequest.getErrorResponse: every group named answers the error."""
    return build(response_schema(_KEY, request.version), {
        "throttle_time": 0, "groups": [_empty(g, code) for g in request.body.groups]})
