"""Publishes how far this broker's metadata cache has caught up.

The broker's own ephemeral /fauxka/applied/<id> holds the newest metadata
version its cache has fully applied; a controller running with
fauxka.admin.blocking=cluster waits for every live broker's to reach a write's
version. Writes are coalesced: only the newest version is ever written.
"""

import asyncio
from typing import Any

from zkstore import NodeExists, NoNode, ZkStore, ZkUnavailable
from zkstore import paths as zp


class AppliedPublisher:
    def __init__(self, zk: ZkStore, broker_id: int, log: Any):
        self._zk = zk
        self._path = zp.applied_path(broker_id)
        self._log = log
        self._desired = -1
        self._published: int | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="applied-publisher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def publish(self, version: int) -> None:
        self._desired = max(self._desired, version)
        self._wake.set()

    def session_renewed(self) -> None:
        self._published = None  # the ephemeral node went with the old session
        self._wake.set()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._published != self._desired:
                version = self._desired
                try:
                    await self._write(str(version).encode())
                except ZkUnavailable as exc:
                    self._log.warning("could not publish applied metadata version", error=str(exc))
                    break  # retried when the session comes back
                self._published = version

    async def _write(self, data: bytes) -> None:
        try:
            await self._zk.set(self._path, data)
        except NoNode:
            try:
                await self._zk.create(self._path, data, ephemeral=True)
            except NodeExists:
                await self._zk.set(self._path, data)
