"""Where a parsed request goes: its handler here, or the controller inside an envelope; and the
one place that checks the api table's role (who answers an api) before a handler runs. The handler
comes from broker/handlers/table.py, which calls in here."""

import functools
import inspect
from typing import Any

from model.errors import ErrorCode

from .context import RequestContext
from .handlers.error_responses import error_response
from .protocol.api_table import Api, Role

# the broker's attribute holding each coordinator role (broker/coordination/)
COORDINATOR_ROLES = {Role.GROUP_COORDINATOR: "group_role", Role.TXN_COORDINATOR: "txn_role"}


async def dispatch(ctx: RequestContext, handler) -> Any:
    """`answer(ctx, handler)`, through the injected faults (broker/fault_injection.py) for a client's
    request (not one inside an envelope: its forwarding broker applied them)."""
    faults = getattr(ctx.broker, "faults", None)
    if faults is None or ctx.forwarded_by is not None or not faults.active:  # no partial, no extra frame
        return await answer(ctx, handler)
    return await faults.dispatch(ctx, functools.partial(answer, handler=handler))


async def answer(ctx: RequestContext, handler) -> Any:
    """The response entity, the encoded response (header + body) to pass through as it is, or
    None: no response at all (Produce with acks=0; the connection writes nothing).

    A forwardable request received by a broker that is not the active controller is
    forwarded, unless it already came inside an envelope (no double forwarding).
    """
    api = ctx.request.api
    precheck = handler.precheck if ctx.forwarded_by is None else None
    refused = precheck(ctx, ctx.request.body) if precheck is not None else None
    if inspect.isawaitable(refused):  # a precheck that answers the request on the receiving broker
        refused = await refused
    if refused is not None:
        return refused
    if api.forwardable and ctx.forwarded_by is None and not ctx.broker.admin.active:
        return await ctx.broker.forwarding.forward(ctx)
    refused = refuse_for_role(ctx, api, handler)
    if refused is not None:
        return refused
    return await handler.handle(ctx, ctx.request.body)


def refuse_for_role(ctx: RequestContext, api: Api, handler) -> Any:
    """The api's error response when this broker does not hold the role that answers it, else None.

    - CONTROLLER: NOT_CONTROLLER on a broker that is not the active controller (KafkaApis'
      `controllerMutationQuota` / ZkSupport.requireZkOrThrow checks). A forwardable api got here
      only inside an envelope or on the controller: its handler answers NOT_CONTROLLER per
      resource, after authorisation, as Kafka's ZkAdminManager does, so it passes.
    - GROUP_COORDINATOR / TXN_COORDINATOR: NOT_COORDINATOR when the role (`ctx.broker.group_role`,
      `txn_role`) exists and does not own the handler module's `coordinator_key(request)` (Kafka's
      GroupCoordinator.isCoordinatorForGroup / TransactionCoordinator's check).
    - LEADER: nothing here; leadership is per partition, so the handler answers
      NOT_LEADER_OR_FOLLOWER partition by partition, as ReplicaManager does.
    """
    if api.role is Role.CONTROLLER:
        if api.forwardable or ctx.broker.admin.active:
            return None
        return error_response(ctx.request, ErrorCode.not_controller, handler.error_response)
    if api.role in COORDINATOR_ROLES:
        coordinator = getattr(ctx.broker, COORDINATOR_ROLES[api.role], None)
        key_of = handler.coordinator_key
        if coordinator is None or key_of is None:
            return None
        key = key_of(ctx.request)
        if key is not None and not coordinator.owns(key):
            return error_response(ctx.request, ErrorCode.not_coordinator, handler.error_response)
    return None
