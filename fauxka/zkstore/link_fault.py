"""A `zookeeper` fault on one broker's own link (fauxka/broker/fault_injection.py): its connection to
ZooKeeper dropped and every reconnection refused, as when the network between the broker and
ZooKeeper fails. ZooKeeper expires the session after its timeout (the broker's ephemeral znodes go:
its registration, /controller on the controller). Restored, kazoo reconnects, is told the session
expired (LOST) and opens a new one; the broker registers again on it (Kafka's KafkaZkClient
re-registers after a session expiry the same way).

Kazoo has no way to drop a connection on purpose: the cut points the client at a port bound and
never listened on (so every attempt is refused at once, and the port stays ours) and shuts the
current socket down, which kazoo's connection thread takes for a broken connection.
"""

import asyncio
import socket
import time
from typing import Any, Callable

from . import paths as zp
from .errors import ZkUnavailable
from .store import ZkStore


class LinkCut:
    def __init__(self, store: ZkStore):
        self._store = store
        self._hole: socket.socket | None = None

    @property
    def cut(self) -> bool:
        return self._hole is not None

    def cut_link(self) -> None:
        if self._hole is not None:
            return
        self._hole = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._hole.bind(("127.0.0.1", 0))
        _, slash, chroot = self._store._hosts.partition("/")
        client = self._store._client
        client.set_hosts(f"127.0.0.1:{self._hole.getsockname()[1]}{slash}{chroot}")
        current = getattr(client._connection, "_socket", None)
        if current is not None:
            try:
                current.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed: kazoo is reconnecting, to the hole from now on

    def restore_link(self) -> None:
        if self._hole is None:
            return
        self._store._client.set_hosts(self._store._hosts)
        self._hole.close()
        self._hole = None


async def wait_fault_gone(hosts: str, fault_id: str, expires_ms: int | None, session_timeout_ms: int,
                          log: Any, poll_s: float = 0.1, stopped: Callable[[], bool] = lambda: False) -> None:
    """While the broker's own link is cut: until the fault's znode is gone or it expires, watched
    through a session of its own (the fault machinery's, not the broker's link under test)."""
    control = ZkStore(hosts, session_timeout_ms, log)
    try:
        await control.start(session_timeout_ms / 1000)
        while not stopped():
            if expires_ms is not None and time.time() * 1000 >= expires_ms:
                return
            try:
                if await control.exists(zp.fault_path(fault_id)) is None:
                    return
            except ZkUnavailable:
                pass  # ZooKeeper itself away: asked again
            await asyncio.sleep(poll_s)
    finally:
        await control.stop()
