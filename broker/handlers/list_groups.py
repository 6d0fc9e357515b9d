"""ListGroups v0-v4: the groups this broker coordinates (clients ask every broker).

v1 throttle time; v3 flexible; v4 (KIP-518) states_filter and group_state. Authorization:
DESCRIBE on the Cluster lists every group, else only the groups with DESCRIBE (KafkaApis.handleListGroupsRequest).
COORDINATOR_LOAD_IN_PROGRESS while any of this broker's group partitions is loading.
"""

from model.acl_model import CLUSTER_NAME
from model.errors import ErrorCode

from ..protocol.build import build
from ..protocol.codec import response_schema
from .group_common import groups

_KEY = 16


async def handle(ctx, request):
    version = ctx.version
    states = set(request.states_filter) if version >= 4 and request.states_filter else None
    runtime = ctx.broker.coordinators.runtime
    error = ErrorCode.none
    if any(state.value == "loading" for state, _ in runtime.partitions.values()):
        error = ErrorCode.coordinator_load_in_progress
    listed = groups(ctx).list_groups(states)
    if not ctx.authorized("DESCRIBE", "CLUSTER", CLUSTER_NAME, log_if_denied=False):
        listed = [g for g in listed if ctx.authorized("DESCRIBE", "GROUP", g[0], log_if_allowed=False,
                                                      log_if_denied=False)]
    return build(response_schema(_KEY, version), {
        "throttle_time": 0, "error_code": error,
        "groups": [{"group_id": g, "protocol_type": t, "group_state": s} for g, t, s in listed]})


def error_response(request, code):
    return build(response_schema(_KEY, request.version), {"throttle_time": 0, "error_code": code, "groups": []})
