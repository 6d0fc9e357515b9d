"""Where a parsed request goes: its handler here, or (later) the controller."""

from typing import Any

from .context import RequestContext


async def dispatch(ctx: RequestContext) -> Any:
    """The response entity, or the encoded response (header + body) to pass through as it is."""
    return await ctx.request.api.handler(ctx, ctx.request.body)
