"""Kafka's `LogValidator` and `UnifiedLog.analyzeAndValidateRecords`, over bytes.

Leader appends: header checks and CRC only (no record decoding) unless Kafka needs records:
keys on compacted topics, re-compression when the topic's `compression.type` is neither
`producer` nor the batch's codec, and magic 0/1 message sets (converted to one v2 batch as Kafka
3.x does). Offsets, the partition leader epoch and LogAppendTime are patched in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import batch as B
from . import records as R
from .config import LogConfig
from .errors import ErrorCode, StorageError


@dataclass
class Validated:
    """Batches ready to write: `buffer` holds them back to back, offsets assigned."""

    buffer: bytearray | bytes
    headers: list[B.BatchHeader] = field(default_factory=list)
    log_append_time: int = -1

    @property
    def first_offset(self) -> int:
        return self.headers[0].base_offset

    @property
    def last_offset(self) -> int:
        return self.headers[-1].last_offset

    @property
    def record_count(self) -> int:
        return sum(h.record_count for h in self.headers)

    @property
    def size(self) -> int:
        return len(self.buffer)


# A record's smallest encoding: length, attributes, timestamp delta, offset delta, key length,
# value length and header count, one byte each (Kafka's `DefaultRecord`).
_MIN_RECORD_SIZE = 7


def _invalid(message: str) -> StorageError:
    return StorageError(ErrorCode.invalid_record, message)


def produce_version_error(records, version: int) -> StorageError | None:
    """Kafka 3.9 `ProduceRequest.validateRecords`: v3+ takes one magic 2 batch (INVALID_RECORD),
    zstd only from v7 (UNSUPPORTED_COMPRESSION_TYPE); v0-v2 are not checked (old clients send
    any magic in any version). The first batch's header is read as Kafka's iterator reads it."""
    if version < 3 or records is None:
        return None
    size = B.peek_size(records) if len(records) >= B.LOG_OVERHEAD + 5 else None
    if size is None or size > len(records):
        return _invalid(f"Produce requests with version {version} must have at least one record batch per partition")
    if B.magic_of(records) != 2:
        return _invalid(f"Produce requests with version {version} are only allowed to contain record batches "
                        "with magic version 2")
    if version < 7 and len(records) > B.ATTRIBUTES_OFFSET + 1 and records[B.ATTRIBUTES_OFFSET + 1] & B.CODEC_MASK == 4:
        return StorageError(ErrorCode.unsupported_compression_type,
                            f"Produce requests with version {version} are not allowed to use ZStandard compression")
    return None


def split(buf, *, strict: bool) -> list[B.BatchHeader]:
    """The v2 batch headers in buf. strict (client bytes): a length that lies is
    CORRUPT_MESSAGE; otherwise (replica fetch) a trailing partial batch is ignored."""
    headers = []
    pos, end = 0, len(buf)
    while pos < end:
        if end - pos < B.LOG_OVERHEAD + 5:
            if strict:
                raise R.corrupt(f"{end - pos} trailing bytes do not hold a record batch")
            break
        size = B.peek_size(buf, pos)
        if size - B.LOG_OVERHEAD < B.MIN_BATCH_LENGTH:
            raise R.corrupt(f"Record batch size {size} is less than the minimum {B.HEADER_SIZE}")
        if pos + size > end:
            if strict:
                raise R.corrupt(f"Record batch claims {size} bytes, {end - pos} remain")
            break
        if B.magic_of(buf, pos) != 2:
            raise R.corrupt(f"Record batch magic {B.magic_of(buf, pos)} among v2 batches")
        headers.append(B.BatchHeader(buf, pos))
        pos += size
    return headers


def check_batch(buf, h: B.BatchHeader, tp: str, origin: str) -> None:
    """CRC, codec and Kafka's `LogValidator.validateBatch` header rules; origin is Kafka's
    `AppendOrigin`: "client", "coordinator" or "replication" (the last two skip the client rules)."""
    from_client = origin != "replication"
    if not h.crc_ok(buf):
        raise StorageError(ErrorCode.corrupt_message, f"Record is corrupt (stored crc = {h.crc}) in topic partition {tp}.",
                           invalid="crc")
    if h.codec not in B.CODECS:
        raise R.corrupt(f"Unknown compression codec {h.codec}")
    if h.last_offset_delta < 0:
        raise _invalid(
            f"Batch has an invalid offset range: [{h.base_offset}, {h.last_offset}] in topic partition {tp}"
        )
    if from_client and h.record_count <= 0:
        raise _invalid(f"Invalid reported count for record batch: {h.record_count} in topic partition {tp}")
    if from_client and h.last_offset_delta + 1 != h.record_count:
        raise _invalid(
            f"Inconsistent batch offset range [{h.base_offset}, {h.last_offset}] and count of "
            f"records {h.record_count} in topic partition {tp}"
        )
    if h.codec == 0 and h.record_count * _MIN_RECORD_SIZE > h.size - B.HEADER_SIZE:
        raise R.corrupt(
            f"Record batch claims {h.record_count} records in {h.size - B.HEADER_SIZE} bytes"
        )
    if origin != "client":
        return
    if h.is_control:
        raise _invalid(f"Clients are not allowed to write control records in topic partition {tp}")
    if h.has_producer_id and h.base_sequence < 0:
        raise _invalid(
            f"Invalid sequence number {h.base_sequence} in record batch with producerId "
            f"{h.producer_id} in topic partition {tp}"
        )


def _timestamp_errors(
    buf, h: B.BatchHeader, config: LogConfig, now_ms: int, index_base: int
) -> list[tuple[int, str | None]]:
    """Per-record INVALID_TIMESTAMP errors (decodes only once the header shows a bad bound)."""
    low, high = now_ms - config.timestamp_before_max_ms, now_ms + config.timestamp_after_max_ms
    if h.log_append_time:  # only a broker may set it (Kafka's validateTimestamp)
        return [
            (index_base + i, f"Invalid timestamp type in message with offset {h.base_offset + i}. "
                             "Producer should not set timestamp type to LogAppendTime.")
            for i in range(h.record_count)
        ]
    if config.message_timestamp_type == "LogAppendTime":
        return []

    def bad(ts: int) -> bool:
        return ts != B.NO_TIMESTAMP and (ts < low or ts > high)

    if not (bad(h.first_timestamp) or bad(h.max_timestamp)):
        return []
    return [
        (
            index_base + i,
            f"Timestamp {r.timestamp} of message with offset {h.base_offset + r.offset_delta} is "
            f"out of range. The timestamp should be within [{low}, {high}]",
        )
        for i, r in enumerate(R.decode(buf, h))
        if bad(r.timestamp)
    ]


def _raise_record_errors(errors: list[tuple[int, str | None]], timestamps: bool, invalid: str | None = None) -> None:
    """Kafka's `LogValidator.processRecordErrors`."""
    if timestamps:
        raise StorageError(
            ErrorCode.invalid_timestamp,
            "One or more records have been rejected due to invalid timestamp",
            errors,
        )
    raise StorageError(
        ErrorCode.invalid_record,
        f"One or more records have been rejected due to {len(errors)} record errors in total, "
        f"and only showing the first three errors at most: {errors[:3]}",
        errors,
        invalid,
    )


def _check_size(size: int, config: LogConfig, tp: str) -> None:
    """MESSAGE_TOO_LARGE as `UnifiedLog.analyzeAndValidateRecords` (and after re-compression)."""
    if size > config.max_message_bytes:
        raise StorageError(
            ErrorCode.message_too_large,
            f"The record batch size in the append to {tp} is {size} bytes which exceeds the "
            f"maximum configured value of {config.max_message_bytes}.",
        )


def _require_keys(records, tp: str) -> None:
    """INVALID_RECORD with per-record errors for keyless records on a compacted topic."""
    errors = [
        (i, f"Compacted topic cannot accept message without key in topic partition {tp}.")
        for i, r in enumerate(records)
        if r.key is None
    ]
    if errors:
        _raise_record_errors(errors, timestamps=False, invalid="no_key_compacted")


def validate_leader(
    records: bytes, config: LogConfig, next_offset: int, leader_epoch: int, now_ms: int, tp: str,
    origin: str = "client",
) -> Validated:
    """A client's records for one partition, validated and assigned offsets from next_offset.
    origin "coordinator" (Kafka's `AppendOrigin.COORDINATOR`) may write control batches."""
    if not records:
        raise _invalid("Produce requests with version 3 and above must have at least one record batch")
    if len(records) < B.LOG_OVERHEAD + 5:
        raise R.corrupt(f"{len(records)} bytes do not hold a record batch")
    if B.magic_of(records, 0) < 2:
        return _convert_legacy(records, config, next_offset, leader_epoch, now_ms, tp)
    headers = split(records, strict=True)
    if len(headers) != 1:
        raise _invalid("Compressed outer record has more than one batch")
    h = headers[0]
    if origin == "client" and h.base_offset != 0:  # Kafka 3.x analyzeAndValidateRecords
        raise _invalid(
            f"The baseOffset of the record batch in the append to {tp} should be 0, but it is {h.base_offset}"
        )
    _check_size(h.size, config, tp)
    check_batch(records, h, tp, origin)
    errors = _timestamp_errors(records, h, config, now_ms, 0)
    if errors:
        _raise_record_errors(errors, timestamps=True)
    target = config.compression_type
    recompress = target != "producer" and B.CODEC_IDS[target] != h.codec and not h.is_control
    compact = config.compact and not h.is_control
    decoded = R.decode(records, h) if (recompress or compact) else None
    if compact:
        _require_keys(decoded, tp)
    if recompress:
        buf = R.build(
            decoded,
            B.CODEC_IDS[target],
            transactional=h.is_transactional,
            producer_id=h.producer_id,
            producer_epoch=h.producer_epoch,
            base_sequence=h.base_sequence,
        )
        h = B.BatchHeader(buf, 0)
        _check_size(h.size, config, tp)
    else:
        buf = bytearray(records)
    return _assign(buf, h, config, next_offset, leader_epoch, now_ms)


def _assign(buf: bytearray, h, config, next_offset, leader_epoch, now_ms) -> Validated:
    """Patch the batch at buf[0:] and its header view `h` alike."""
    B.set_base_offset(buf, 0, next_offset)
    B.set_leader_epoch(buf, 0, leader_epoch)
    h.base_offset, h.leader_epoch = next_offset, leader_epoch
    log_append_time = -1
    if config.message_timestamp_type == "LogAppendTime":
        B.set_max_timestamp(buf, 0, h.size, True, now_ms)
        h.attributes |= B.TIMESTAMP_TYPE_MASK
        h.max_timestamp = log_append_time = now_ms
    return Validated(buf, [h], log_append_time)


def _convert_legacy(records, config, next_offset, leader_epoch, now_ms, tp) -> Validated:
    """Kafka 3.x `LogValidator.convertAndAssignOffsets*`: magic 0/1 -> one v2 batch."""
    messages, source_codec, _ = R.decode_legacy(records)
    if source_codec:
        _check_size(len(records), config, tp)
    low, high = now_ms - config.timestamp_before_max_ms, now_ms + config.timestamp_after_max_ms
    if config.message_timestamp_type == "CreateTime":
        errors = [
            (i, f"Timestamp {m.timestamp} of message with offset {next_offset + i} is out of "
                f"range. The timestamp should be within [{low}, {high}]")
            for i, m in enumerate(messages)
            if m.timestamp != B.NO_TIMESTAMP and not low <= m.timestamp <= high
        ]
        if errors:
            _raise_record_errors(errors, timestamps=True)
    if config.compact:
        _require_keys(messages, tp)
    target = config.compression_type
    codec = source_codec if target == "producer" else B.CODEC_IDS[target]
    buf = R.build(
        [R.Record(i, m.timestamp, m.key, m.value, []) for i, m in enumerate(messages)], codec
    )
    h = B.BatchHeader(buf, 0)
    _check_size(h.size, config, tp)
    return _assign(buf, h, config, next_offset, leader_epoch, now_ms)


def validate_follower(records: bytes, tp: str, log_end_offset: int = 0) -> Validated:
    """A leader's batches as fetched: offsets kept, CRC checked, trailing partial batch dropped
    (Kafka's `appendAsFollower` through `analyzeAndValidateRecords`); batches wholly below
    log_end_offset (a re-fetch) are left out."""
    headers = split(records, strict=False)
    known = 0
    while known < len(headers) and headers[known].last_offset < log_end_offset:
        known += 1
    if known:
        start = headers[known].position if known < len(headers) else len(records)
        records = records[start:]
        headers = headers[known:]
        for h in headers:
            h.position -= start
    for h in headers:
        check_batch(records, h, tp, "replication")
    for prev, h in zip(headers, headers[1:]):
        if h.base_offset <= prev.last_offset:
            raise StorageError(
                ErrorCode.corrupt_message,
                f"Out of order offsets in fetched batches for {tp}: {h.base_offset} after {prev.last_offset}",
            )
    end = headers[-1].position + headers[-1].size if headers else 0
    buf = records if end == len(records) else records[:end]
    return Validated(buf, headers)
