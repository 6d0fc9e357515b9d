"""Injected faults in ZooKeeper (paths.FAULTS/<id>, model.faults' JSON): written by `fauxka fault`
and fauxka.testing, watched by every broker (fauxka/broker/fault_injection.py)."""

import secrets
import time
from dataclasses import replace
from typing import Callable

from fauxka.model.faults import Fault, consumed, decode, decode_obeyed, encode

from . import paths as zp
from .errors import BadVersion, NoNode, NodeExists
from .store import ZkStore
from .watch_set import WatchSet


def new_id() -> str:
    return f"f-{secrets.token_hex(4)}"


class FaultStore:
    def __init__(self, zk: ZkStore):
        self._zk = zk

    async def add(self, fault: Fault) -> Fault:
        """Write the fault (a fresh id when its id is empty); the fault as stored."""
        if not fault.id:
            fault = replace(fault, id=new_id())
        if not fault.created_ms:
            fault = replace(fault, created_ms=int(time.time() * 1000))
        await self._zk.ensure_path(zp.FAULTS)
        try:
            await self._zk.create(zp.fault_path(fault.id), encode(fault))
        except NodeExists:
            raise ValueError(f"a fault with id {fault.id} already exists") from None
        return fault

    async def list(self) -> list[Fault]:
        faults = []
        for name in sorted(await self._zk.get_children(zp.FAULTS) or ()):
            got = await self._zk.get(zp.fault_path(name))
            if got is not None:
                faults.append(decode(got[0]))
        return sorted(faults, key=lambda f: (f.created_ms, f.id))

    async def remove(self, fault_id: str) -> bool:
        try:
            await self._zk.delete(zp.fault_path(fault_id))
            return True
        except NoNode:
            return False

    async def clear(self) -> int:
        removed = 0
        for name in await self._zk.get_children(zp.FAULTS) or ():
            removed += await self.remove(name)
        return removed

    async def obeyed_by(self, broker_id: int) -> "list[str] | None":  # quoted: `list` is a method here
        """The fault ids broker `broker_id` obeys (what it publishes under paths.FAULTS_SEEN), None
        when it publishes nothing (not running)."""
        got = await self._zk.get(zp.faults_seen_path(broker_id))
        if got is None:
            return None
        try:
            return decode_obeyed(got[0])["faults"]
        except ValueError:
            return None

    async def set_tracing(self, on: bool) -> None:
        """Create (on) or delete (off) paths.TRACE, which every broker watches."""
        try:
            if on:
                await self._zk.create(zp.TRACE, b"on", makepath=True)
            else:
                await self._zk.delete(zp.TRACE)
        except (NodeExists, NoNode):
            pass

    async def consume(self, fault_id: str, attempts: int = 20) -> bool:
        """Take one hit of a counted fault, cluster-wide (compare-and-set on the znode's version):
        False when none is left (another broker took the last one, or it was removed)."""
        path = zp.fault_path(fault_id)
        for _ in range(attempts):
            got = await self._zk.get(path)
            if got is None:
                return False
            fault = decode(got[0])
            if fault.count is None:
                return True
            after = consumed(fault)
            try:
                if after is None:
                    await self._zk.delete(path, got[1].version)
                else:
                    await self._zk.set(path, encode(after), got[1].version)
                return True
            except (BadVersion, NoNode):
                continue
        return False


class FaultWatch:
    """Every fault, followed through watches: `faults` is the current list; `on_change()` runs
    after every change (on the event loop)."""

    def __init__(self, zk: ZkStore, on_change: Callable[[], None]):
        self._watches = WatchSet(zk)
        self._on_change = on_change
        self.faults: dict[str, Fault] = {}

    def start(self) -> None:
        self._watches.add("children", zp.FAULTS, self._on_children)

    def stop(self) -> None:
        self._watches.cancel_all()
        self.faults.clear()

    def _on_children(self, names: list[str] | None) -> None:
        names = set(names or ())
        for path in self._watches.paths(zp.FAULTS + "/"):
            name = path.rsplit("/", 1)[1]
            if name not in names:
                self._watches.remove(path)
                self.faults.pop(name, None)
        for name in names:
            self._watches.add("data", zp.fault_path(name), lambda got, n=name: self._on_data(n, got))
        self._on_change()

    def _on_data(self, name: str, got) -> None:
        if got is None:
            self.faults.pop(name, None)
        else:
            try:
                self.faults[name] = decode(got[0])
            except (ValueError, TypeError):
                self.faults.pop(name, None)  # not a fault we can read: ignored
        self._on_change()
