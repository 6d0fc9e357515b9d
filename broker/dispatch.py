"""Where a parsed request goes: its handler here, or the controller inside an envelope."""

from typing import Any

from .context import RequestContext


async def dispatch(ctx: RequestContext) -> Any:
    """The response entity, or the encoded response (header + body) to pass through as it is.

    A forwardable request received by a broker that is not the active controller is
    forwarded, unless it already came inside an envelope (no double forwarding).
    """
    api = ctx.request.api
    precheck = api.precheck if ctx.forwarded_by is None else None
    refused = precheck(ctx, ctx.request.body) if precheck is not None else None
    if refused is not None:
        return refused
    if api.forwardable and ctx.forwarded_by is None and not ctx.broker.admin.active:
        return await ctx.broker.forwarding.forward(ctx)
    return await api.handler(ctx, ctx.request.body)
