"""IncrementalAlterConfigs v0-v1: SET, DELETE, APPEND, SUBTRACT on a resource's configs.
v1 is v0 made flexible. BROKER_LOGGER resources are the receiving broker's (precheck)."""

from .config_changes import answer, loggers_here


def precheck(ctx, request):
    return loggers_here(ctx, request)


async def handle(ctx, request):
    return await answer(ctx, request, incremental=True)
