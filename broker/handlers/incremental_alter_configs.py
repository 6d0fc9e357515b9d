"""IncrementalAlterConfigs v0-v1: SET, DELETE, APPEND, SUBTRACT on a resource's configs."""

from .config_changes import answer


async def handle(ctx, request):
    return await answer(ctx, request, incremental=True)
