"""Helpers of the fault tests (test_faults_*.py): one ZooKeeper session, through zkstore, that
watches a cluster's znodes from outside while brokers are killed, paused and cut off."""

import asyncio
import json
import threading

import structlog

from fauxka.zkstore import Stat, ZkStore


class ZkWatcher:
    """A synchronous ZooKeeper reader inside one cluster's chroot (host:port/chroot).

    One session for the whole test, so polling every 10 ms costs a round trip, not a
    new session (tests.harness.Cluster.zk_get opens one per read). zkstore's coroutines run
    on a private event loop in its own thread, so any test thread may call it."""

    def __init__(self, connect: str, timeout_s: float = 10):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="zk-watcher", daemon=True)
        self._thread.start()
        self._store = ZkStore(connect, 10000, structlog.get_logger())
        self._run(self._store.start(timeout_s), timeout_s + 5)

    def _run(self, coro, timeout_s: float = 15):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)

    def exists(self, path: str) -> bool:
        return self.stat(path) is not None

    def stat(self, path: str) -> Stat | None:
        return self._run(self._store.exists(path))

    def get(self, path: str) -> bytes | None:
        got = self._run(self._store.get(path))
        return got[0] if got else None

    def children(self, path: str) -> list[str]:
        return self._run(self._store.get_children(path)) or []

    def controller(self) -> int:
        data = self.get("/controller")
        return json.loads(data)["brokerid"] if data else -1

    def close(self) -> None:
        self._run(self._store.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()
