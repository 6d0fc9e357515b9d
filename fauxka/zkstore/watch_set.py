"""The watches one cache keeps (metadata, ACLs, tokens), by path, and whether each has
delivered its first answer, so the cache can tell when its initial load is complete."""

import asyncio
from typing import Any, Callable

from .store import ZkStore


class WatchSet:
    def __init__(self, zk: ZkStore):
        self._zk = zk
        self._watches: dict[str, Any] = {}
        self._unsynced: set[str] = set()
        self._synced = asyncio.Event()

    def add(self, kind: str, path: str, callback: Callable[[Any], None]) -> None:
        """Watch `path` ("data" or "children") unless already watched."""
        if path in self._watches:
            return
        self._unsynced.add(path)

        def first_then_callback(value: Any) -> None:
            callback(value)
            self._settled(path)

        add = self._zk.watch_data if kind == "data" else self._zk.watch_children
        self._watches[path] = add(path, first_then_callback)

    def remove(self, path: str) -> None:
        watch = self._watches.pop(path, None)
        if watch is not None:
            watch.cancel()
        self._settled(path)

    def pause(self, path: str) -> None:
        self._watches[path].pause()

    def resume(self, path: str) -> None:
        self._watches[path].resume()

    def paths(self, prefix: str = "") -> list[str]:
        return [path for path in self._watches if path.startswith(prefix)]

    def __contains__(self, path: str) -> bool:
        return path in self._watches

    async def wait_synced(self, timeout_s: float) -> None:
        """Until every watch has delivered its first answer."""
        async with asyncio.timeout(timeout_s):
            await self._synced.wait()

    def cancel_all(self) -> None:
        for watch in self._watches.values():
            watch.cancel()
        self._watches.clear()

    def _settled(self, path: str) -> None:
        self._unsynced.discard(path)
        if not self._unsynced:
            self._synced.set()
