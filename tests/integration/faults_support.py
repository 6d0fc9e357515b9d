"""Helpers of the fault tests (test_faults_*.py): one ZooKeeper session, through zkstore, that
watches a cluster's znodes from outside while brokers are killed, paused and cut off."""

import asyncio
import json

import structlog

from zkstore import Stat, ZkStore


class ZkWatcher:
    """A synchronous ZooKeeper reader inside one cluster's chroot (host:port/chroot).

    One session for the whole test, so polling every 10 ms costs a round trip, not a
    new session (tests.harness.Cluster.zk_get opens one per read). It runs zkstore's
    coroutines on a private event loop."""

    def __init__(self, connect: str, timeout_s: float = 10):
        self._loop = asyncio.new_event_loop()
        self._store = ZkStore(connect, 10000, structlog.get_logger())
        self._run(self._store.start(timeout_s))

    def _run(self, coro):
        return self._loop.run_until_complete(coro)

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
        self._loop.close()
