"""Controller election through ZooKeeper, as Kafka does it in ZK mode.

One multi-op creates the ephemeral /controller and bumps /controller_epoch at
the version we read; losing either race means another broker won. The new
epoch's znode version is what every later controller write is fenced on.
"""

import asyncio
from typing import Any, Callable

from fauxka.zkstore import MultiFailed, NodeExists, Op, SessionState, Stat, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp


class ControllerElection:
    def __init__(self, zk: ZkStore, broker_id: int, log: Any, on_change: Callable[[bool], None]):
        self._zk = zk
        self._broker_id = broker_id
        self._log = log.bind(component="election")
        self._on_change = on_change
        self.active = False
        self.epoch = 0
        self.epoch_zk_version = -1  # /controller_epoch's version while we are controller
        self._task: asyncio.Task | None = None
        self._recheck = False
        self._watch = None

    def start(self) -> None:
        self._zk.on_session(self._on_session)
        self._watch = self._zk.watch_data(zp.CONTROLLER, self._on_controller)

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._resign("shutdown")

    # --- events --------------------------------------------------------------

    def _is_ours(self, value: tuple[bytes, Stat] | None) -> bool:
        if value is None:
            return False
        try:
            holder = zp.decode_controller(value[0])
        except (ValueError, KeyError):
            return False
        return holder == self._broker_id and value[1].ephemeral_owner == self._zk.session_id

    def _on_controller(self, value: tuple[bytes, Stat] | None) -> None:
        ours = self._is_ours(value)
        if self.active and not ours:
            self._resign("/controller was deleted" if value is None else "/controller is held by another broker")
        if not self.active:
            self._check_soon()

    def _on_session(self, state: SessionState) -> None:
        if state is SessionState.LOST and self.active:
            self._resign("ZooKeeper session expired")
        elif state is SessionState.CONNECTED and not self.active:
            self._check_soon()  # an election interrupted by the disconnect may be due

    # --- election --------------------------------------------------------------

    def _check_soon(self) -> None:
        self._recheck = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._check(), name="controller-election")

    async def _check(self) -> None:
        while self._recheck:
            self._recheck = False
            try:
                current = await self._zk.get(zp.CONTROLLER)
                if current is None:
                    await self._elect()
                elif self._is_ours(current) and not self.active:
                    # Our own multi-op went through although its answer was lost.
                    await self._become_active(*await self._read_epoch())
            except ZkUnavailable as exc:
                self._log.warning("controller election interrupted", error=str(exc))

    async def _elect(self) -> None:
        epoch, version = await self._read_epoch()
        try:
            results = await self._zk.multi([
                Op.create(zp.CONTROLLER, zp.encode_controller(self._broker_id), ephemeral=True),
                Op.set(zp.CONTROLLER_EPOCH, zp.encode_epoch(epoch + 1), version),
            ])
        except MultiFailed as lost:
            self._log.info("controller election lost", reason=type(lost.cause).__name__)
            return
        await self._become_active(epoch + 1, results[1].version)

    async def _become_active(self, epoch: int, epoch_zk_version: int) -> None:
        self.epoch, self.epoch_zk_version = epoch, epoch_zk_version
        self.active = True
        self._log.info("elected controller", epoch=self.epoch)
        self._on_change(True)

    async def _read_epoch(self) -> tuple[int, int]:
        current = await self._zk.get(zp.CONTROLLER_EPOCH)
        if current is None:
            try:
                await self._zk.create(zp.CONTROLLER_EPOCH, zp.encode_epoch(0))
            except NodeExists:
                pass
            current = await self._zk.get(zp.CONTROLLER_EPOCH)
        data, stat = current
        return zp.decode_epoch(data), stat.version

    def resign(self, reason: str) -> None:
        """Stop acting as controller at once (a fenced write found the epoch moved)."""
        self._resign(reason)

    def _resign(self, reason: str) -> None:
        if not self.active:
            return
        self.active = False
        self._log.warning("resigned as controller", reason=reason, epoch=self.epoch)
        self._on_change(False)
