"""Controller writes, fenced on /controller_epoch.

Every multi-op starts with a version check of /controller_epoch at the version
this controller set when it was elected. A BADVERSION there means another
broker became controller since: the write is refused and the caller resigns.
Every multi-op ends by bumping the version of /fauxka/metadata_version, which
brokers report back once applied (cluster-consistent blocking).
"""

from typing import Any, Callable

from . import paths as zp
from .errors import BadVersion
from .store import MultiFailed, Op, ZkStore


class ControllerMoved(Exception):
    """The epoch fence failed: this broker is no longer the controller."""


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
        except MultiFailed as failed:
            if failed.index == 0 and isinstance(failed.cause, BadVersion):
                raise ControllerMoved("/controller_epoch changed: another broker is controller") from None
            raise MultiFailed(failed.index - 1, failed.cause) from None
        self.last_version = max(self.last_version, results[-1].version)
        return results[1:-1]
