"""Kafka's error codes and the one exception that carries one.

`ErrorCode` is kio's enum (wire values, `.retriable`); members are lower case, e.g.
`ErrorCode.not_leader_or_follower`. Rules raise `KafkaError(code, message)`; handlers turn it
into the response's error code and, where the version has one, error message.
"""

from kio.schema.errors import ErrorCode

__all__ = ["ErrorCode", "KafkaError"]


class KafkaError(Exception):
    """A failure a client sees as one Kafka error code, with Kafka's message where it sends one."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        super().__init__(message or code.name)
        self.code = ErrorCode(code)
        self.message = message
