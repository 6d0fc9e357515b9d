"""AlterConfigs v0-v2: replace a resource's dynamic configs."""

from typing import TYPE_CHECKING

from ..context import RequestContext
from ..protocol.requests import Response
from .config_changes import answer

if TYPE_CHECKING:
    from ..protocol.requests import AlterConfigsRequest


async def handle(ctx: RequestContext, request: "AlterConfigsRequest") -> Response:
    return await answer(ctx, request, incremental=False)
