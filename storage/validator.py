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


def _invalid(message: str) -> StorageError:
    return StorageError(ErrorCode.invalid_record, message)


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


def check_batch(buf, h: B.BatchHeader, tp: str, from_client: bool) -> None:
    """CRC, codec and Kafka's `LogValidator.validateBatch` header rules."""
    if not h.crc_ok(buf):
        raise R.corrupt(f"Record batch at offset {h.base_offset} in {tp} is corrupt (CRC mismatch)")
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
    if not from_client:
        return
    if h.is_control:
        raise _invalid("Clients are not allowed to write control records")
    if h.has_producer_id and h.base_sequence < 0:
        raise _invalid(f"Invalid sequence number {h.base_sequence} in record batch with producerId {h.producer_id}")
    if h.is_transactional and not h.has_producer_id:
        raise _invalid("Transactional records must have a producer id")


def _timestamp_errors(
    buf, h: B.BatchHeader, config: LogConfig, now_ms: int, index_base: int
) -> list[tuple[int, str | None]]:
    """Per-record INVALID_TIMESTAMP errors (decodes only once the header shows a bad bound)."""
    low, high = now_ms - config.timestamp_before_max_ms, now_ms + config.timestamp_after_max_ms
    if h.log_append_time:
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


def _raise_record_errors(errors: list[tuple[int, str | None]], timestamps: bool) -> None:
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
    )


def validate_leader(
    records: bytes, config: LogConfig, next_offset: int, leader_epoch: int, now_ms: int, tp: str
) -> Validated:
    """A client's records for one partition, validated and assigned offsets from next_offset."""
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
    if h.size > config.max_message_bytes:
        raise StorageError(
            ErrorCode.message_too_large,
            f"The record batch size in the append to {tp} is {h.size} bytes which exceeds the "
            f"maximum configured value of {config.max_message_bytes}.",
        )
    check_batch(records, h, tp, from_client=True)
    errors = _timestamp_errors(records, h, config, now_ms, 0)
    if errors:
        _raise_record_errors(errors, timestamps=True)
    target = config.compression_type
    recompress = target != "producer" and B.CODEC_IDS[target] != h.codec
    decoded = R.decode(records, h) if (recompress or config.compact) else None
    if config.compact:
        errors = [
            (i, f"Compacted topic cannot accept message without key in topic partition {tp}.")
            for i, r in enumerate(decoded)
            if r.key is None
        ]
        if errors:
            _raise_record_errors(errors, timestamps=False)
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
        if h.size > config.max_message_bytes:
            raise StorageError(
                ErrorCode.message_too_large,
                f"Message batch size is {h.size} bytes in append to partition {tp} which "
                f"exceeds the maximum configured size of {config.max_message_bytes}.",
            )
    else:
        buf = bytearray(records)
    return _assign(buf, h, config, next_offset, leader_epoch, now_ms)


def _assign(buf: bytearray, h, config, next_offset, leader_epoch, now_ms) -> Validated:
    B.set_base_offset(buf, 0, next_offset)
    B.set_leader_epoch(buf, 0, leader_epoch)
    log_append_time = -1
    if config.message_timestamp_type == "LogAppendTime":
        B.set_max_timestamp(buf, 0, h.size, True, now_ms)
        log_append_time = now_ms
    elif h.log_append_time:  # a client may not claim LogAppendTime on a CreateTime topic
        B.set_max_timestamp(buf, 0, h.size, False, h.max_timestamp)
    return Validated(buf, [B.BatchHeader(buf, 0)], log_append_time)


def _convert_legacy(records, config, next_offset, leader_epoch, now_ms, tp) -> Validated:
    """Kafka 3.x `LogValidator.convertAndAssignOffsets*`: magic 0/1 -> one v2 batch."""
    messages, source_codec, _ = R.decode_legacy(records)
    if len(records) > config.max_message_bytes and source_codec:
        raise StorageError(
            ErrorCode.message_too_large,
            f"The record batch size in the append to {tp} is {len(records)} bytes which exceeds "
            f"the maximum configured value of {config.max_message_bytes}.",
        )
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
        errors = [
            (i, f"Compacted topic cannot accept message without key in topic partition {tp}.")
            for i, m in enumerate(messages)
            if m.key is None
        ]
        if errors:
            _raise_record_errors(errors, timestamps=False)
    target = config.compression_type
    codec = source_codec if target == "producer" else B.CODEC_IDS[target]
    buf = R.build(
        [R.Record(i, m.timestamp, m.key, m.value, []) for i, m in enumerate(messages)], codec
    )
    h = B.BatchHeader(buf, 0)
    if h.size > config.max_message_bytes:
        raise StorageError(
            ErrorCode.message_too_large,
            f"Message batch size is {h.size} bytes in append to partition {tp} which exceeds "
            f"the maximum configured size of {config.max_message_bytes}.",
        )
    return _assign(buf, h, config, next_offset, leader_epoch, now_ms)


def validate_follower(records: bytes, tp: str) -> Validated:
    """A leader's batches as fetched: offsets kept, CRC checked, trailing partial batch dropped
    (Kafka's `appendAsFollower` through `analyzeAndValidateRecords`)."""
    headers = split(records, strict=False)
    for h in headers:
        check_batch(records, h, tp, from_client=False)
    for prev, h in zip(headers, headers[1:]):
        if h.base_offset <= prev.last_offset:
            raise StorageError(
                ErrorCode.corrupt_message,
                f"Out of order offsets in fetched batches for {tp}: {h.base_offset} after {prev.last_offset}",
            )
    end = headers[-1].position + headers[-1].size if headers else 0
    buf = records if end == len(records) else records[:end]
    return Validated(buf, headers)
