"""ListGroups v0-v5: the groups this broker coordinates (clients ask every broker).

v1 throttle time; v3 flexible; v4 (KIP-518) states_filter and group_state; v5 (KIP-848)
types_filter and group_type: as Kafka 3.9's classic GroupCoordinator.handleListGroups, every group
is "classic", and a filter without "classic" (case-insensitive) lists none. Authorization:
DESCRIBE on the Cluster lists every group, else only the groups with DESCRIBE (KafkaApis.handleListGroupsRequest).
COORDINATOR_LOAD_IN_PROGRESS while any of this broker's group partitions is loading.
"""

from typing import TYPE_CHECKING

from fauxka.model.acl_model import CLUSTER_NAME
from fauxka.model.errors import ErrorCode

from ..context import RequestContext
from ..protocol.build import build
from ..protocol.codec import response_schema
from ..protocol.requests import Response

if TYPE_CHECKING:
    from ..protocol.requests import ListGroupsRequest

_KEY = 16
CLASSIC = "classic"  # Group.GroupType.CLASSIC: the only kind of group in ZooKeeper mode


async def handle(ctx: RequestContext, request: "ListGroupsRequest") -> Response:
    version = ctx.version
    states = set(request.states_filter) if version >= 4 and request.states_filter else None
    error = ErrorCode.coordinator_load_in_progress if ctx.groups.loading() else ErrorCode.none
    listed = ctx.groups.list_groups(states)
    types = request.types_filter if version >= 5 else None
    if types and not any(t.lower() == CLASSIC for t in types):
        listed = []
    if not ctx.authorized("DESCRIBE", "CLUSTER", CLUSTER_NAME, log_if_denied=False):
        listed = [g for g in listed if ctx.authorized("DESCRIBE", "GROUP", g[0], log_if_allowed=False,
                                                      log_if_denied=False)]
    return build(response_schema(_KEY, version), {
        "throttle_time": 0, "error_code": error,
        "groups": [{"group_id": g, "protocol_type": t, "group_state": s, "group_type": CLASSIC} for g, t, s in listed]})


def error_response(request, code):
    return build(response_schema(_KEY, request.version), {"throttle_time": 0, "error_code": code, "groups": []})
