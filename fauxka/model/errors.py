"""Kafka's error codes, the one exception that carries one, and the two failures of the
controller's store that callers above it answer (NOT_CONTROLLER, REQUEST_TIMED_OUT) without
knowing the store: fauxka/zkstore raises them.

`ErrorCode` is kio's enum (wire values, `.retriable`); members are lower case, e.g.
`ErrorCode.not_leader_or_follower`. Rules raise `KafkaError(code, message)`; handlers turn it
into the response's error code and, where the version has one, error message.
"""

from kio.schema.errors import ErrorCode

__all__ = ["ControllerMoved", "ErrorCode", "KafkaError", "StoreUnavailable"]


class KafkaError(Exception):
    """A failure a client sees as one Kafka error code, with Kafka's message where it sends one."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        super().__init__(message or code.name)
        self.code = ErrorCode(code)
        self.message = message


class ControllerMoved(Exception):
    """The epoch fence failed: this broker is no longer the controller (Kafka's
    ControllerMovedException, NOT_CONTROLLER). Raised by fauxka/zkstore/fenced.py's writes."""


class StoreUnavailable(Exception):
    """The metadata store could not be reached (connection loss, session expiry, a timeout): the
    outcome is unknown. fauxka/zkstore's ZkUnavailable is one."""
