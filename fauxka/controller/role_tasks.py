"""What a part of the controller role owns while this broker is controller: its tasks and its
subscription to the metadata cache, all dropped at once when the role is lost."""

import asyncio


class RoleTasks:
    def __init__(self) -> None:
        self._tasks: list[asyncio.Task] = []
        self._unsubscribe = None

    def halt(self) -> list[asyncio.Task]:
        """Stop at once (this broker is no longer controller): the tasks cancelled are returned, so a
        re-election right after cannot have its new tasks cancelled by a late stop."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        return tasks

    async def stop(self) -> None:
        await asyncio.gather(*self.halt(), return_exceptions=True)
