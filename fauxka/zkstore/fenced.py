"""Controller writes, fenced on /controller_epoch.

Every multi-op starts with a version check of /controller_epoch at the version
this controller set when it was elected. A BADVERSION there means another
broker became controller since: the write is refused and the caller resigns.
Every multi-op ends by bumping the version of /fauxka/metadata_version, which
brokers report back once applied (cluster-consistent blocking).
"""

from typing import Any, Callable

from fauxka.model.errors import ControllerMoved

from . import paths as zp
from .errors import BadVersion, ZkUnavailable
from .store import MultiFailed, Op, ZkStore

__all__ = ["ControllerMoved", "FencedWriter"]  # ControllerMoved: fauxka/model/errors.py's, raised here

# How long a write that lost its connection waits for ZooKeeper before re-checking the fence.
RECONNECT_WAIT_S = 5.0


class FencedWriter:
    def __init__(self, zk: ZkStore, epoch_zk_version: Callable[[], int]):
        self._zk = zk
        self._epoch_zk_version = epoch_zk_version
        self.round_trips = 0  # multi-ops sent, for benchmarks
        self.last_version = 0  # metadata version of the newest write

    async def write(self, ops: list[Op]) -> list[Any]:
        """Apply `ops` atomically behind the fence. MultiFailed indexes refer to `ops`."""
        self.round_trips += 1
        try:
            results = await self._zk.multi([Op.check(zp.CONTROLLER_EPOCH, self._epoch_zk_version()), *ops,
                                            Op.set(zp.METADATA_VERSION, b"")])
        except ZkUnavailable:
            await self._recheck_fence()
            raise
        except MultiFailed as failed:
            if failed.index == 0 and isinstance(failed.cause, BadVersion):
                raise ControllerMoved("/controller_epoch changed: another broker is controller") from None
            raise MultiFailed(failed.index - 1, failed.cause) from None
        self.last_version = max(self.last_version, results[-1].version)
        return results[1:-1]

    async def _recheck_fence(self) -> None:
        """A write whose connection was lost (a zombie controller resumed after its session
        expired, a ZooKeeper restart): once reconnected, read /controller_epoch. If another
        broker was elected meanwhile, this is ControllerMoved -- what Kafka answers after
        retrying the fenced multi-op on a new session (NOT_CONTROLLER). Otherwise the outcome
        stays unknown and the caller's ZkUnavailable stands (REQUEST_TIMED_OUT)."""
        if not await self._zk.wait_connected(RECONNECT_WAIT_S):
            return
        try:
            current = await self._zk.get(zp.CONTROLLER_EPOCH)
        except ZkUnavailable:
            return
        if current is not None and current[1].version != self._epoch_zk_version():
            raise ControllerMoved("/controller_epoch changed while ZooKeeper was unreachable: "
                                  "another broker is controller") from None
