"""AlterConfigs v0-v2: replace a resource's dynamic configs."""

from .config_changes import answer


async def handle(ctx, request):
    return await answer(ctx, request, incremental=False)
