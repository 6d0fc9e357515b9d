"""ZooKeeper failures in fauxka's terms, so no caller needs kazoo's exceptions."""

from kazoo import exceptions as kx

from fauxka.model.errors import StoreUnavailable


class ZkError(Exception):
    pass


class NoNode(ZkError):
    pass


class NodeExists(ZkError):
    pass


class BadVersion(ZkError):
    pass


class NotEmpty(ZkError):
    pass


class ZkUnavailable(ZkError, StoreUnavailable):
    """Connection loss, session expiry, or a timeout: the outcome is unknown."""


def translate(exc: BaseException) -> BaseException:
    match exc:
        case kx.NoNodeError():
            return NoNode(str(exc))
        case kx.NodeExistsError():
            return NodeExists(str(exc))
        case kx.BadVersionError():
            return BadVersion(str(exc))
        case kx.NotEmptyError():
            return NotEmpty(str(exc))
        case kx.ConnectionLoss() | kx.SessionExpiredError() | kx.ConnectionClosedError() | kx.OperationTimeoutError():
            return ZkUnavailable(f"{type(exc).__name__}: {exc}")
        case kx.ZookeeperError():
            return ZkError(f"{type(exc).__name__}: {exc}")
    return exc
