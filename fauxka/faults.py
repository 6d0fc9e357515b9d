"""Faults from outside the cluster (the command line, fauxka.testing): make one from names a
person types, and add, list, remove or clear them in the cluster's ZooKeeper (fauxka/zkstore/faults.py).

    client = FaultClient("127.0.0.1:2181")           # host:port[/chroot] of the cluster's ZooKeeper
    fault = client.add(make_fault("error", api="produce", topic="orders", partition=0,
                                  error="NOT_LEADER_OR_FOLLOWER", count=3))
    client.remove(fault.id); client.clear(); client.close()
"""

import asyncio
import threading
import time

import structlog

from fauxka.model.faults import Fault, FaultError, Scope, error_code
from fauxka.zkstore import ZkStore
from fauxka.zkstore.faults import FaultStore

__all__ = ["FaultClient", "FaultError", "make_fault", "api_key"]


def api_key(name_or_key: str | int) -> int:
    """An api's key from its name in any common spelling (produce, Produce, ListOffsets,
    list_offsets, OffsetCommit) or its number; FaultError naming the known ones otherwise."""
    from fauxka.broker.protocol.api_table import TABLE

    if isinstance(name_or_key, int) or str(name_or_key).isdigit():
        key = int(name_or_key)
        if key in TABLE:
            return key
        raise FaultError(f"unknown api key {key}")
    wanted = str(name_or_key).replace("_", "").replace("-", "").lower().removesuffix("request")
    for key, api in TABLE.items():
        if api.name.replace("_", "") == wanted:
            return key
    known = ", ".join(sorted(api.name for api in TABLE.values()))
    raise FaultError(f"unknown api {name_or_key!r}; one of: {known}")


def _versions(versions) -> tuple[int | None, int | None]:
    if versions is None:
        return None, None
    if isinstance(versions, int):
        return versions, versions
    if isinstance(versions, tuple):
        return versions
    low, _, high = str(versions).partition("-")
    try:
        return (int(low) if low else None), (int(high) if high else int(low) if not _ else None)
    except ValueError:
        raise FaultError(f"versions must look like 3, 3-7, 3- or -7, not {versions!r}") from None


def make_fault(kind: str, *, broker: int | None = None, api: str | int | None = None, versions=None,
               topic: str | None = None, partition: int | None = None, client_id: str | None = None,
               principal: str | None = None, error: str | int | None = None, throttle_ms: int = 0,
               delay_ms: int = 0, jitter_ms: int = 0, count: int | None = None,
               duration_s: float | None = None, peer: int | None = None, id: str = "") -> Fault:
    """A Fault from readable arguments; FaultError (a ValueError) says what is wrong."""
    low, high = _versions(versions)
    scope = Scope(broker=broker, api_key=api_key(api) if api is not None else None, min_version=low,
                  max_version=high, topic=topic, partition=partition, client_id=client_id, principal=principal)
    code = int(error_code(error)) if error is not None else None
    if duration_s is not None and duration_s <= 0:
        raise FaultError("duration must be positive")
    expires = int(time.time() * 1000 + duration_s * 1000) if duration_s is not None else None
    return Fault(id, kind, scope, error=code, throttle_ms=throttle_ms, delay_ms=delay_ms, jitter_ms=jitter_ms,
                 peer=peer, count=count, expires_ms=expires)


class FaultClient:
    """Synchronous: zkstore's coroutines run on a private loop in its own thread, so any thread
    (a test, the command line) may call it."""

    def __init__(self, zk_connect: str, timeout_s: float = 10, known_brokers=None):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fauxka-faults", daemon=True)
        self._thread.start()
        self._timeout_s = timeout_s
        self._known_brokers = known_brokers
        self._zk = ZkStore(zk_connect, 10000, structlog.get_logger())
        try:
            self._run(self._zk.start(timeout_s))
        except BaseException:
            self._shutdown_loop()
            raise
        self.store = FaultStore(self._zk)

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(self._timeout_s + 5)

    def add(self, fault: Fault) -> Fault:
        brokers = self.brokers()
        for named in (fault.scope.broker, fault.peer):
            if named is not None and brokers and named not in brokers:
                raise FaultError(f"no broker {named} in the cluster (brokers: {sorted(brokers)})")
        return self._run(self.store.add(fault))

    def list(self, include_expired: bool = False) -> list[Fault]:
        """The faults in force; expired ones are removed on the way (a fault never outlives its
        count or duration: brokers ignore it from then on anyway)."""
        now = int(time.time() * 1000)
        faults = self._run(self.store.list())
        for fault in faults:
            if fault.expired(now) and not include_expired:
                self.remove(fault.id)
        return [f for f in faults if include_expired or not f.expired(now)]

    def remove(self, fault_id: str) -> bool:
        return self._run(self.store.remove(fault_id))

    def clear(self) -> int:
        return self._run(self.store.clear())

    def set_tracing(self, on: bool) -> None:
        """Every broker records the requests it answers (fauxka.trace.file) while on."""
        self._run(self.store.set_tracing(on))

    def brokers(self) -> set[int]:
        """The registered brokers' ids."""
        return {int(b) for b in self._run(self._zk.get_children("/brokers/ids")) or ()}

    def children(self, path: str) -> "list[str]":
        return self._run(self._zk.get_children(path)) or []

    def get(self, path: str) -> bytes | None:
        got = self._run(self._zk.get(path))
        return got[0] if got else None

    def close(self) -> None:
        try:
            self._run(self._zk.stop())
        finally:
            self._shutdown_loop()

    def _shutdown_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
