"""An asyncio facade over kazoo.

kazoo runs its own I/O and callback threads; every result and watch event is
handed to the event loop with call_soon_threadsafe, so callers only ever see
coroutines and callbacks on the loop. Watches re-arm themselves after every
event and are re-armed as a whole when a new session begins.
"""

import asyncio
import enum
import itertools
import time
from dataclasses import dataclass
from typing import Any, Callable

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import RolledBackError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import Callback, EventType

from .errors import NoNode, ZkUnavailable, translate
from .ops import MultiFailed, Op


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
        self._disconnected = False  # since the last CONNECTED: watches must be re-armed
        self._pending_reads = 0  # watch reads started and not yet handled on the loop
        self.requests = {"read": 0, "write": 0, "multi": 0}  # ZooKeeper round trips, by kind
        self.on_latency: Callable[[float], None] | None = None  # each request's round trip, ms (the broker's metrics)
        self._quiet_listeners: list[Callable[[], None]] = []
        self._connected_event: asyncio.Event | None = None  # set while connected (see wait_connected)
        self._client.add_listener(self._on_state)

    # --- life cycle ----------------------------------------------------------

    async def start(self, timeout_s: float) -> None:
        self._loop = asyncio.get_running_loop()
        try:
            await self._loop.run_in_executor(None, self._create_chroot, timeout_s)
            await self._loop.run_in_executor(None, lambda: self._client.start(timeout=timeout_s))
        except KazooTimeoutError:
            await self.stop()
            raise ZkUnavailable(f"could not connect to ZooKeeper at {self._hosts} within {timeout_s:.1f}s") from None
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

    async def wait_connected(self, timeout_s: float) -> bool:
        """Wait until kazoo is connected (to the old session or a new one); False at the deadline."""
        if self._connected_event is None:
            self._connected_event = asyncio.Event()
        if self._client.connected:
            return True
        try:
            async with asyncio.timeout(timeout_s):
                await self._connected_event.wait()
        except TimeoutError:
            return False
        return self._client.connected

    def _session_changed(self, state: SessionState) -> None:
        if self._connected_event is not None:
            if state is SessionState.CONNECTED:
                self._connected_event.set()
            else:
                self._connected_event.clear()
        if state is SessionState.CONNECTED and (self.session_id != self._last_session or self._disconnected):
            # A new session holds no watches of ours. Neither does the same session after a
            # reconnect: kazoo (2.11) never sends ZooKeeper's SetWatches, so the server forgot
            # every watch of the old connection (a ZooKeeper restart, a network blip) and no
            # event would ever come again. Re-read everything, which also catches up on what
            # changed while we were away.
            self._last_session = self.session_id
            for watch in list(self._watches):
                watch.arm()
        self._disconnected = state is not SessionState.CONNECTED
        for listener in list(self._session_listeners):
            listener(state)

    # --- watch bookkeeping ------------------------------------------------------

    def _call_soon(self, fn: Callable, *args: Any) -> bool:
        loop = self._loop
        if loop is None or loop.is_closed():
            return False
        loop.call_soon_threadsafe(fn, *args)
        return True

    def _read_started(self) -> None:
        self._pending_reads += 1

    def _read_finished(self) -> None:
        self._pending_reads -= 1
        if self._pending_reads == 0:
            for listener in list(self._quiet_listeners):
                listener()

    @property
    def pending_reads(self) -> int:
        return self._pending_reads

    def on_quiet(self, listener: Callable[[], None]) -> None:
        """`listener()` on the loop whenever no watch read is in flight."""
        self._quiet_listeners.append(listener)

    def barrier(self, fn: Callable[[], None]) -> None:
        """Run `fn` on the loop after every watch event kazoo has received so far has
        started its re-read (they share kazoo's callback queue, which is FIFO)."""
        self._client.handler.dispatch_callback(Callback("barrier", self._call_soon, (fn,)))

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

    async def _call(self, start: Callable[[], Any], convert=lambda v: v, kind: str = "read") -> Any:
        self.requests[kind] += 1
        try:
            async_result = start()
        except Exception as exc:  # kazoo raises at once when the connection is closed
            raise translate(exc) from None
        if self.on_latency is None:
            return await self._bridge(async_result, convert)
        sent = time.monotonic()
        try:
            return await self._bridge(async_result, convert)
        finally:
            self.on_latency((time.monotonic() - sent) * 1000)

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
            path, data, ephemeral=ephemeral, sequence=sequence, makepath=makepath), kind="write")

    async def set(self, path: str, data: bytes, version: int = -1) -> Stat:
        return await self._call(lambda: self._client.set_async(path, data, version), _stat, kind="write")

    async def ensure_path(self, path: str) -> None:
        await self._call(lambda: self._client.ensure_path_async(path), kind="write")

    async def delete(self, path: str, version: int = -1) -> None:
        await self._call(lambda: self._client.delete_async(path, version), kind="write")

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

        results = await self._call(start, kind="multi")
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
    """A self re-arming ZooKeeper watch. Only the newest read's answer is delivered.

    Every read it starts is counted in the store's `pending_reads` until its answer
    has been handled on the loop, which is what `ZkStore.barrier` relies on.
    """

    _generations = itertools.count()

    def __init__(self, store: ZkStore, path: str, kind: str, callback: Callable[[Any], None]):
        self.store, self.path, self.kind, self.callback = store, path, kind, callback
        self.cancelled = False
        self.paused = False
        self._generation = -1

    def cancel(self) -> None:
        self.cancelled = True
        self.store._watches.discard(self)

    def pause(self) -> None:
        """Events no longer trigger a re-read (the caller follows the changes itself) until resume()."""
        self.paused = True

    def resume(self) -> None:
        """Read (and watch) again now."""
        self.paused = False
        self.arm()

    def arm(self) -> None:
        """Read the node and leave a watch (on the loop)."""
        if self.cancelled:
            return
        self.store._read_started()
        self._read()

    def _fired(self, event) -> None:  # kazoo's callback thread
        if event.type == EventType.NONE or self.cancelled or self.paused:
            return
        if self.store._call_soon(self.store._read_started):  # queued before the read's answer can be
            self._read()

    def _read(self) -> None:
        """Start a read; exactly one _settle follows on the loop."""
        self.store.requests["read"] += 1
        generation = next(self._generations)
        self._generation = generation
        client = self.store._client
        try:
            if self.kind == "data":
                result = client.get_async(self.path, watch=self._fired)
            else:
                result = client.get_children_async(self.path, watch=self._fired)
        except Exception:  # closed or not connected: the session listener re-arms us
            self._settle(None, generation, deliver=False)
            return
        result.rawlink(lambda r: self._answered(r, generation))

    def _answered(self, result, generation: int) -> None:  # kazoo's completion thread
        if result.successful():
            value = result.value
            if self.kind == "data":
                value = (value[0], _stat(value[1]))
            self._settle(value, generation)
            return
        exc = translate(result.exception)
        if isinstance(exc, NoNode):
            # Watch for the node's creation; deliver "absent" unless it appeared meanwhile.
            try:
                exists = self.store._client.exists_async(self.path, watch=self._fired)
            except Exception:
                self._settle(None, generation, deliver=False)
                return
            exists.rawlink(lambda r: self._absent(r, generation))
            return
        if not isinstance(exc, ZkUnavailable):
            self.store._log.error("zk watch read failed", path=self.path, error=repr(exc))
        self._settle(None, generation, deliver=False)

    def _absent(self, result, generation: int) -> None:
        if result.successful() and result.value is None:
            self._settle(None, generation)
        elif result.successful():
            self._read()  # created between our read and our exists: the same counted read goes on
        else:
            self._settle(None, generation, deliver=False)

    def _settle(self, value: Any, generation: int, deliver: bool = True) -> None:
        self.store._call_soon(self._run_callback, value, generation, deliver)

    def _run_callback(self, value: Any, generation: int, deliver: bool) -> None:
        try:
            if deliver and not self.cancelled and generation == self._generation:
                self.callback(value)
        except Exception as exc:  # a bad callback must not kill the watch
            self.store._log.exception("zk watch callback failed", path=self.path, error=repr(exc))
        finally:
            self.store._read_finished()
