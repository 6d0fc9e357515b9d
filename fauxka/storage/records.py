"""Whole-record work, only where Kafka decodes: compacted topics, re-compression, magic 0/1.

Records are read and built with aiokafka's record module (C-accelerated; codecs through
cramjam); every failure to decode hostile bytes becomes CORRUPT_MESSAGE, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiokafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from aiokafka.record.legacy_records import LegacyRecordBatch

from .batch import CONTROL_MASK, BatchHeader, recompute_crc
from .errors import ErrorCode, StorageError

_UNBOUNDED = 2**31 - 1


@dataclass(slots=True)
class Record:
    offset_delta: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list


def corrupt(message: str) -> StorageError:
    return StorageError(ErrorCode.corrupt_message, message)


def decode(buf, header: BatchHeader) -> list[Record]:
    """The records of the v2 batch `header` describes (CRC already checked)."""
    raw = bytes(buf[header.position : header.position + header.size])
    try:
        batch = DefaultRecordBatch(raw)
        out = [
            Record(r.offset - header.base_offset, r.timestamp, r.key, r.value, list(r.headers))
            for r in batch
        ]
    except Exception as exc:  # hostile bytes: whatever the decoder trips on
        raise corrupt(f"Record batch at offset {header.base_offset} is corrupt: {exc}") from None
    if len(out) != header.record_count:
        raise corrupt(f"Record batch claims {header.record_count} records, holds {len(out)}")
    for r in out:
        if not 0 <= r.offset_delta <= header.last_offset_delta:
            raise corrupt(f"Record offset delta {r.offset_delta} outside the batch")
    return out


def build(
    records: list[Record],
    codec: int,
    *,
    transactional: bool = False,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
) -> bytearray:
    """A v2 batch at base offset 0 holding `records` (offset deltas kept) with `codec`."""
    builder = DefaultRecordBatchBuilder(
        2, codec, int(transactional), producer_id, producer_epoch, base_sequence, _UNBOUNDED
    )
    for r in records:
        builder.append(r.offset_delta, r.timestamp, r.key, r.value, r.headers)
    return bytearray(builder.build())


def build_control_batch(
    producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, timestamp_ms: int
) -> bytearray:
    """A transaction marker (Kafka's `EndTransactionMarker`) at base offset 0: one record whose
    key is (version 0, type 1 commit / 0 abort) and value (version 0, coordinator epoch)."""
    builder = DefaultRecordBatchBuilder(2, 0, 1, producer_id, producer_epoch, -1, _UNBOUNDED)
    key = (0).to_bytes(2, "big") + (1 if commit else 0).to_bytes(2, "big")
    value = (0).to_bytes(2, "big") + coordinator_epoch.to_bytes(4, "big", signed=True)
    builder.append(0, timestamp_ms, key, value, [])
    buf = bytearray(builder.build())
    attributes = int.from_bytes(buf[21:23], "big") | CONTROL_MASK
    buf[21:23] = attributes.to_bytes(2, "big")
    recompute_crc(buf, 0, len(buf))
    return buf


@dataclass(slots=True)
class LegacyMessage:
    timestamp: int
    key: bytes | None
    value: bytes | None


def decode_legacy(buf) -> tuple[list[LegacyMessage], int, int]:
    """Magic 0/1 message set -> (messages, source codec, wrapper count); a trailing partial
    message is ignored as Kafka's `ByteBufferLogInputStream` ignores it."""
    messages: list[LegacyMessage] = []
    codec = 0
    pos = 0
    wrappers = 0
    view = bytes(buf)
    while len(view) - pos >= 12 + 5:
        size = int.from_bytes(view[pos + 8 : pos + 12], "big", signed=True)
        magic = view[pos + 16]
        min_size = 14 if magic == 0 else 22
        if size < min_size:
            raise corrupt(f"Message size {size} is less than the minimum {min_size}")
        if pos + 12 + size > len(view):
            break
        if magic > 1:
            raise corrupt("A message set mixes magic 2 with magic 0/1")
        entry = view[pos : pos + 12 + size]
        try:
            batch = LegacyRecordBatch(entry, magic)
            if not batch.validate_crc():
                raise corrupt("Message is corrupt (CRC mismatch)")
            attrs = entry[17]
            codec = max(codec, attrs & 0x07)
            for r in batch:
                messages.append(LegacyMessage(r.timestamp if magic else -1, r.key, r.value))
        except StorageError:
            raise
        except Exception as exc:
            raise corrupt(f"Message set is corrupt: {exc}") from None
        wrappers += 1
        pos += 12 + size
    if not wrappers:
        raise corrupt("Message set holds no complete message")
    return messages, codec, wrappers


def marker_coordinator_epoch(buf, header: BatchHeader) -> int | None:
    """A transaction marker's value: version int16, coordinator epoch int32 (EndTransactionMarker)."""
    try:
        value = decode(buf, header)[0].value or b""
    except (StorageError, IndexError):
        return None
    return int.from_bytes(value[2:6], "big", signed=True) if len(value) >= 6 else None


def control_type(buf, header: BatchHeader) -> int | None:
    """A control batch's record key: version int16, type int16 (0 abort, 1 commit)."""
    try:
        key = decode(buf, header)[0].key or b""
    except (StorageError, IndexError):
        return None
    return int.from_bytes(key[2:4], "big") if len(key) >= 4 else None
