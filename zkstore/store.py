"""An asyncio facade over kazoo.

kazoo runs its own I/O and callback threads; every result and watch event is
handed to the event loop with call_soon_threadsafe, so callers only ever see
coroutines and callbacks on the loop. Watches re-arm themselves after every
event and are re-armed as a whole when a new session begins.
"""

import asyncio
import enum
import itertools
from dataclasses import dataclass
from typing import Any, Callable

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import RolledBackError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import EventType

from .errors import NoNode, ZkUnavailable, translate


class SessionState(enum.Enum):
    CONNECTED = "connected"  # connected; may be a new session (see ZkStore.session_id)
    SUSPENDED = "suspended"  # disconnected; the session may still be alive
    LOST = "lost"  # the session expired: every ephemeral node and watch of ours is gone


@dataclass(frozen=True, slots=True)
class Stat:
    version: int
    ephemeral_owner: int
    czxid: int
    mzxid: int


def _stat(kstat) -> Stat:
    return Stat(kstat.version, kstat.ephemeralOwner, kstat.czxid, kstat.mzxid)


@dataclass(frozen=True, slots=True)
class Op:
    """One operation of a multi-op (ZooKeeper transaction)."""

    kind: str  # create | set | delete | check
    path: str
    data: bytes = b""
    version: int = -1
    ephemeral: bool = False
    sequence: bool = False

    @staticmethod
    def create(path: str, data: bytes = b"", ephemeral: bool = False, sequence: bool = False) -> "Op":
        return Op("create", path, data, ephemeral=ephemeral, sequence=sequence)

    @staticmethod
    def set(path: str, data: bytes, version: int = -1) -> "Op":
        return Op("set", path, data, version)

    @staticmethod
    def delete(path: str, version: int = -1) -> "Op":
        return Op("delete", path, version=version)

    @staticmethod
    def check(path: str, version: int) -> "Op":
        return Op("check", path, version=version)


class MultiFailed(Exception):
    """A multi-op was rolled back; `cause` is the failure of operation `index`."""

    def __init__(self, index: int, cause: BaseException):
        super().__init__(f"multi-op failed at operation {index}: {cause!r}")
        self.index, self.cause = index, cause


class ZkStore:
    def __init__(self, hosts: str, session_timeout_ms: int, log: Any):
        self._hosts = hosts
        self._client = KazooClient(
            hosts=hosts,
            timeout=session_timeout_ms / 1000,
            connection_retry={"max_tries": -1, "delay": 0.1, "backoff": 2, "max_delay": 1},
        )
        self._log = log
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watches: set[_Watch] = set()
        self._session_listeners: list[Callable[[SessionState], None]] = []
        self._last_session: int | None = None
        self._client.add_listener(self._on_state)

    # --- life cycle ----------------------------------------------------------

    async def start(self, timeout_s: float) -> None:
        self._loop = asyncio.get_running_loop()
        try:
            await self._loop.run_in_executor(None, self._create_chroot, timeout_s)
            await self._loop.run_in_executor(None, lambda: self._client.start(timeout=timeout_s))
        except KazooTimeoutError:
            await self.stop()
            raise ZkUnavailable(f"could not connect to ZooKeeper within {timeout_s:.1f}s") from None
        self._last_session = self.session_id

    def _create_chroot(self, timeout_s: float) -> None:
        """Kafka creates a missing chroot (host:port/chroot) before using it; so do we."""
        servers, slash, chroot = self._hosts.partition("/")
        if not slash or not chroot.strip("/"):
            return
        bare = KazooClient(hosts=servers)
        try:
            bare.start(timeout=timeout_s)
            bare.ensure_path("/" + chroot.strip("/"))
        finally:
            bare.stop()
            bare.close()

    async def stop(self) -> None:
        for watch in list(self._watches):
            watch.cancel()
        if self._loop is not None:
            await self._loop.run_in_executor(None, self._stop_client)

    def _stop_client(self) -> None:
        self._client.stop()
        self._client.close()

    @property
    def session_id(self) -> int:
        return self._client.client_id[0] if self._client.client_id else 0

    @property
    def connected(self) -> bool:
        return self._client.connected

    def on_session(self, listener: Callable[[SessionState], None]) -> None:
        """`listener` runs on the loop at every connection state change."""
        self._session_listeners.append(listener)

    def _on_state(self, state: str) -> None:  # kazoo's thread: must not block
        if self._loop is None:
            return
        mapped = {KazooState.CONNECTED: SessionState.CONNECTED, KazooState.SUSPENDED: SessionState.SUSPENDED,
                  KazooState.LOST: SessionState.LOST}[state]
        self._loop.call_soon_threadsafe(self._session_changed, mapped)

    def _session_changed(self, state: SessionState) -> None:
        if state is SessionState.CONNECTED and self.session_id != self._last_session:
            self._last_session = self.session_id
            for watch in list(self._watches):  # a new session holds no watches of ours
                watch.arm()
        for listener in list(self._session_listeners):
            listener(state)

    # --- operations ----------------------------------------------------------

    def _bridge(self, async_result, convert: Callable[[Any], Any] = lambda v: v) -> asyncio.Future:
        loop = self._loop
        future = loop.create_future()

        def settle(result) -> None:
            if future.cancelled():
                return
            if result.successful():
                future.set_result(convert(result.value))
            else:
                future.set_exception(translate(result.exception))

        async_result.rawlink(lambda result: loop.call_soon_threadsafe(settle, result))
        return future

    async def _call(self, start: Callable[[], Any], convert=lambda v: v) -> Any:
        try:
            async_result = start()
        except Exception as exc:  # kazoo raises at once when the connection is closed
            raise translate(exc) from None
        return await self._bridge(async_result, convert)

    async def get(self, path: str) -> tuple[bytes, Stat] | None:
        try:
            return await self._call(lambda: self._client.get_async(path), lambda v: (v[0], _stat(v[1])))
        except NoNode:
            return None

    async def get_children(self, path: str) -> list[str] | None:
        try:
            return await self._call(lambda: self._client.get_children_async(path))
        except NoNode:
            return None

    async def exists(self, path: str) -> Stat | None:
        return await self._call(lambda: self._client.exists_async(path), lambda s: _stat(s) if s else None)

    async def create(self, path: str, data: bytes = b"", *, ephemeral: bool = False,
                     sequence: bool = False, makepath: bool = False) -> str:
        return await self._call(lambda: self._client.create_async(
            path, data, ephemeral=ephemeral, sequence=sequence, makepath=makepath))

    async def set(self, path: str, data: bytes, version: int = -1) -> Stat:
        return await self._call(lambda: self._client.set_async(path, data, version), _stat)

    async def ensure_path(self, path: str) -> None:
        await self._call(lambda: self._client.ensure_path_async(path))

    async def delete(self, path: str, version: int = -1) -> None:
        await self._call(lambda: self._client.delete_async(path, version))

    async def multi(self, ops: list[Op]) -> list[Any]:
        """Apply `ops` atomically; raises MultiFailed naming the failing operation."""
        def start():
            txn = self._client.transaction()
            for op in ops:
                if op.kind == "create":
                    txn.create(op.path, op.data, ephemeral=op.ephemeral, sequence=op.sequence)
                elif op.kind == "set":
                    txn.set_data(op.path, op.data, op.version)
                elif op.kind == "delete":
                    txn.delete(op.path, op.version)
                else:
                    txn.check(op.path, op.version)
            return txn.commit_async()

        results = await self._call(start)
        failures = [(i, r) for i, r in enumerate(results)
                    if isinstance(r, BaseException) and not isinstance(r, RolledBackError)]
        if failures:
            index, exc = failures[0]
            raise MultiFailed(index, translate(exc))
        return results

    # --- watches -------------------------------------------------------------

    def watch_data(self, path: str, callback: Callable[[tuple[bytes, Stat] | None], None]) -> "_Watch":
        """Call `callback(data_and_stat or None)` on the loop now and after every change of `path`."""
        return self._add_watch(_Watch(self, path, "data", callback))

    def watch_children(self, path: str, callback: Callable[[list[str] | None], None]) -> "_Watch":
        """Call `callback(children or None)` on the loop now and after every change of `path`'s children."""
        return self._add_watch(_Watch(self, path, "children", callback))

    def _add_watch(self, watch: "_Watch") -> "_Watch":
        self._watches.add(watch)
        watch.arm()
        return watch


class _Watch:
    """A self re-arming ZooKeeper watch. Only the newest read's answer is delivered."""

    _generations = itertools.count()

    def __init__(self, store: ZkStore, path: str, kind: str, callback: Callable[[Any], None]):
        self.store, self.path, self.kind, self.callback = store, path, kind, callback
        self.cancelled = False
        self._generation = -1

    def cancel(self) -> None:
        self.cancelled = True
        self.store._watches.discard(self)

    def arm(self) -> None:
        """Read the node and leave a watch; may be called from any thread."""
        if self.cancelled:
            return
        generation = next(self._generations)
        self._generation = generation
        client = self.store._client
        try:
            if self.kind == "data":
                result = client.get_async(self.path, watch=self._fired)
            else:
                result = client.get_children_async(self.path, watch=self._fired)
        except Exception:  # closed or not connected: the session listener re-arms us
            return
        result.rawlink(lambda r: self._answered(r, generation))

    def _fired(self, event) -> None:  # kazoo's thread
        if event.type != EventType.NONE:
            self.arm()

    def _answered(self, result, generation: int) -> None:  # kazoo's thread
        if result.successful():
            value = result.value
            if self.kind == "data":
                value = (value[0], _stat(value[1]))
            self._deliver(value, generation)
            return
        exc = translate(result.exception)
        if isinstance(exc, NoNode):
            # Watch for the node's creation; deliver "absent" unless it appeared meanwhile.
            try:
                exists = self.store._client.exists_async(self.path, watch=self._fired)
            except Exception:
                return
            exists.rawlink(lambda r: self._absent(r, generation))
        elif not isinstance(exc, ZkUnavailable):
            self.store._log.error("zk watch read failed", path=self.path, error=repr(exc))

    def _absent(self, result, generation: int) -> None:
        if result.successful() and result.value is None:
            self._deliver(None, generation)
        elif result.successful():
            self.arm()  # created between our read and our exists

    def _deliver(self, value: Any, generation: int) -> None:
        loop = self.store._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._run_callback, value, generation)

    def _run_callback(self, value: Any, generation: int) -> None:
        if self.cancelled or generation != self._generation:
            return  # a newer read is on its way
        try:
            self.callback(value)
        except Exception as exc:  # a bad callback must not kill the watch
            self.store._log.exception("zk watch callback failed", path=self.path, error=repr(exc))
