"""Where a parsed request goes: its handler here, or the controller inside an envelope; and the
one place that checks the api table's role (who answers an api) before a handler runs. The handler
comes from fauxka/broker/handlers/table.py, which calls in here."""

import functools
import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Awaitable, Callable

from fauxka.model.errors import ErrorCode
from fauxka.model.faults import FETCH

from .context import RequestContext
from .handlers.error_responses import error_response
from .protocol.api_table import Api, Role
from .protocol.codec import Request
from .protocol.requests import Response

COORDINATOR_ROLES = (Role.GROUP_COORDINATOR, Role.TXN_COORDINATOR)


@dataclass(frozen=True, slots=True)
class Handler:
    """What answers one api: its handler module's functions (fauxka/broker/handlers/table.py builds one a module)."""

    handle: Callable[[RequestContext, Any], Awaitable[Response]]  # the request's body: kio's entity
    # run by the receiving broker before forwarding: a response (or an awaitable of one) answers the
    # request there (e.g. token requests refused on a PLAINTEXT connection, BROKER_LOGGER changes
    # applied on the broker they name)
    precheck: Callable[[RequestContext, Any], Response | Awaitable[Response]] | None = None
    # awaited by the forwarding broker before it passes the controller's answer on (e.g. until its own
    # cache shows it); `received` is the monotonic time the forwarding broker read the request
    after_forward: Callable[[RequestContext, Any, Any, float], Awaitable[None]] | None = None
    # the api's whole answer carrying one error code (Kafka's AbstractRequest.getErrorResponse); without
    # it, fauxka/broker/handlers/error_responses.py builds one
    error_response: Callable[[Request, int], Response] | None = None
    # for coordinator roles: the group id or transactional id whose coordinator must answer
    coordinator_key: Callable[[Request], str | None] | None = None

    @classmethod
    def of(cls, module: ModuleType) -> "Handler":
        return cls(module.handle, getattr(module, "precheck", None), getattr(module, "after_forward", None),
                   getattr(module, "error_response", None), getattr(module, "coordinator_key", None))


async def dispatch(ctx: RequestContext, handler: Handler) -> Response:
    """`answer(ctx, handler)`, through the injected faults (fauxka/broker/fault_injection.py) for a client's
    request (not one inside an envelope: its forwarding broker applied them)."""
    faults = ctx.faults
    if faults is None or ctx.forwarded_by is not None:
        return await answer(ctx, handler)
    if faults.active:
        return await faults.dispatch(ctx, functools.partial(answer, handler=handler))
    if ctx.request.api.key != FETCH:  # no fault in force: no partial, no extra frame
        return await answer(ctx, handler)
    # a follower's Fetch may wait here for records while a fault that stops it comes
    changes = faults.changes
    response = await answer(ctx, handler)
    return await faults.changed_meanwhile(ctx, response) if changes.is_set() else response


async def answer(ctx: RequestContext, handler: Handler) -> Response:
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
    if api.forwardable and ctx.forwarded_by is None and not ctx.controller_active():
        return await ctx.forwarding.forward(ctx)
    refused = refuse_for_role(ctx, api, handler)
    if refused is not None:
        return refused
    return await handler.handle(ctx, ctx.request.body)


def refuse_for_role(ctx: RequestContext, api: Api, handler: Handler) -> Response:
    """The api's error response when this broker does not hold the role that answers it, else None.

    - CONTROLLER: NOT_CONTROLLER on a broker that is not the active controller (KafkaApis'
      `controllerMutationQuota` / ZkSupport.requireZkOrThrow checks). A forwardable api got here
      only inside an envelope or on the controller: its handler answers NOT_CONTROLLER per
      resource, after authorisation, as Kafka's ZkAdminManager does, so it passes.
    - GROUP_COORDINATOR / TXN_COORDINATOR: NOT_COORDINATOR when the coordinator (`ctx.groups`,
      `ctx.transactions`) does not own the handler module's `coordinator_key(request)` (Kafka's
      GroupCoordinator.isCoordinatorForGroup / TransactionCoordinator's check).
    - LEADER: nothing here; leadership is per partition, so the handler answers
      NOT_LEADER_OR_FOLLOWER partition by partition, as ReplicaManager does.
    """
    if api.role is Role.CONTROLLER:
        if api.forwardable or ctx.controller_active():
            return None
        return error_response(ctx.request, ErrorCode.not_controller, handler.error_response)
    if api.role in COORDINATOR_ROLES:
        key_of = handler.coordinator_key
        if key_of is None:
            return None
        key = key_of(ctx.request)
        coordinator = ctx.groups if api.role is Role.GROUP_COORDINATOR else ctx.transactions
        if key is not None and not coordinator.owns(key):
            return error_response(ctx.request, ErrorCode.not_coordinator, handler.error_response)
    return None
