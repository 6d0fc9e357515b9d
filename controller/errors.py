"""Kafka error codes the controller answers with (wire values)."""

NONE = 0
UNKNOWN_SERVER_ERROR = -1
UNKNOWN_TOPIC_OR_PARTITION = 3
REQUEST_TIMED_OUT = 7
INVALID_TOPIC_EXCEPTION = 17
TOPIC_AUTHORIZATION_FAILED = 29
CLUSTER_AUTHORIZATION_FAILED = 31
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_CONFIG = 40
NOT_CONTROLLER = 41
INVALID_REQUEST = 42
POLICY_VIOLATION = 44
TOPIC_DELETION_DISABLED = 73
UNKNOWN_TOPIC_ID = 100


class AdminError(Exception):
    """A per-resource failure with Kafka's code and message."""

    def __init__(self, code: int, message: str | None = None):
        super().__init__(message)
        self.code, self.message = code, message
