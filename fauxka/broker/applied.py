"""Publishes how far this broker's metadata cache has caught up.

The broker's own ephemeral /fauxka/applied/<id> holds the newest metadata
version its cache has fully applied; a controller running with
fauxka.admin.blocking=cluster waits for every live broker's to reach a write's
version. Writes are coalesced: only the newest version is ever written.
"""

import asyncio
from typing import Any

from fauxka.zkstore import NodeExists, NoNode, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp


class LatestValuePublisher:
    """Keeps this broker's ephemeral znode at `path` holding the newest value given to put():
    writes coalesced (only the newest is ever written), rewritten after a session renewal."""

    def __init__(self, zk: ZkStore, path: str, log: Any, what: str):
        self._zk = zk
        self._path = path
        self._log = log
        self._what = what
        self._desired: bytes | None = None
        self._published: bytes | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"{self._what}-publisher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def put(self, data: bytes) -> None:
        self._desired = data
        self._wake.set()

    async def flushed(self, timeout_s: float) -> None:
        """Until the newest value is written, or timeout_s."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while self._published != self._desired and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)

    def session_renewed(self) -> None:
        self._published = None  # the ephemeral node went with the old session
        self._wake.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._desired is not None and self._published != self._desired:
                data = self._desired
                try:
                    await self._write(data)
                except ZkUnavailable as exc:
                    self._log.warning(f"could not publish the {self._what}", error=str(exc))
                    break  # retried when the session comes back
                self._published = data

    async def _write(self, data: bytes) -> None:
        try:
            await self._zk.set(self._path, data)
        except NoNode:
            try:
                await self._zk.create(self._path, data, ephemeral=True, makepath=True)
            except NodeExists:
                await self._zk.set(self._path, data)


class AppliedPublisher(LatestValuePublisher):
    def __init__(self, zk: ZkStore, broker_id: int, log: Any):
        super().__init__(zk, zp.applied_path(broker_id), log, "applied metadata version")
        self._version = -1
        self._desired = b"-1"  # what a session renewal before the first version writes

    def publish(self, version: int) -> None:
        self._version = max(self._version, version)
        self.put(str(self._version).encode())
