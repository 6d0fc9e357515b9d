"""IncrementalAlterConfigs v0-v1: SET, DELETE, APPEND, SUBTRACT on a resource's configs.
v1 is v0 made flexible. BROKER_LOGGER resources are the receiving broker's (precheck)."""

from typing import TYPE_CHECKING

from ..context import RequestContext
from ..protocol.requests import Response
from .config_changes import answer, loggers_here

if TYPE_CHECKING:
    from ..protocol.requests import IncrementalAlterConfigsRequest


def precheck(ctx: RequestContext, request):
    return loggers_here(ctx, request)


async def handle(ctx: RequestContext, request: "IncrementalAlterConfigsRequest") -> Response:
    return await answer(ctx, request, incremental=True)
