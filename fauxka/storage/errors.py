"""Storage failures, each one Kafka error code (Kafka's `ApiException` subclasses in
`org.apache.kafka.common.errors`, as `UnifiedLog` and `LogValidator` throw them)."""

from fauxka.model.errors import ErrorCode, KafkaError

__all__ = ["ErrorCode", "OffsetOutOfRange", "StorageError"]


class StorageError(KafkaError):
    """A rejected append or read.

    `record_errors` are Produce v8+'s per-record errors (`RecordError` in Kafka's
    `RecordValidationException`): (batch_index_in_error, message), the index counting records
    across the partition's batches in the request as Kafka's `LogValidator` counts them.
    `invalid` names what Kafka's `LogValidator.MetricsRecorder` records for it ("crc",
    "no_key_compacted"), for the broker's BrokerTopicMetrics Invalid*/NoKey* meters.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str | None = None,
        record_errors: list[tuple[int, str | None]] | None = None,
        invalid: str | None = None,
    ):
        super().__init__(code, message)
        self.record_errors: list[tuple[int, str | None]] = record_errors or []
        self.invalid = invalid


class OffsetOutOfRange(StorageError):
    """Kafka's `OffsetOutOfRangeException`: an offset outside [log start offset, log end offset]."""

    def __init__(self, message: str | None = None):
        super().__init__(ErrorCode.offset_out_of_range, message)
