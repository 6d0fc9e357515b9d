"""RecordBatch v2 header view over bytes (Kafka's `DefaultRecordBatch`), without decoding records.

Layout (61-byte header): baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 |
magic int8 | crc uint32 | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 |
maxTimestamp int64 | producerId int64 | producerEpoch int16 | baseSequence int32 |
recordCount int32 | records. The CRC32C covers attributes..end, so the base offset and the
partition leader epoch are patched without recomputing it; LogAppendTime rewrites attributes and
maxTimestamp and therefore the CRC (as `DefaultRecordBatch.setMaxTimestamp` does).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from crc32c import crc32c

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12  # base offset + length: the bytes before the length's span
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD  # Kafka's RECORD_BATCH_OVERHEAD minus LOG_OVERHEAD
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAX_TIMESTAMP_OFFSET = 35

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
CODECS = {0: "uncompressed", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CODEC_IDS = {name: cid for cid, name in CODECS.items()}

INT32_MAX = 2147483647
NO_PRODUCER_ID = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1

LENGTH = _LEN = struct.Struct(">qi")  # base offset, batch length
DELTA = struct.Struct(">i")  # last offset delta, at byte 23
_Q = struct.Struct(">q")
_I = struct.Struct(">i")
_CRC = struct.Struct(">I")
_ATTR = struct.Struct(">h")


class BatchHeader:
    """The parsed 61-byte header of the batch at `position` in some buffer."""

    __slots__ = (
        "position", "base_offset", "length", "leader_epoch", "magic", "crc", "attributes",
        "last_offset_delta", "first_timestamp", "max_timestamp", "producer_id",
        "producer_epoch", "base_sequence", "record_count",
    )

    def __init__(self, buf, position: int = 0):
        (
            self.base_offset, self.length, self.leader_epoch, self.magic, self.crc,
            self.attributes, self.last_offset_delta, self.first_timestamp, self.max_timestamp,
            self.producer_id, self.producer_epoch, self.base_sequence, self.record_count,
        ) = HEADER.unpack_from(buf, position)
        self.position = position

    @property
    def size(self) -> int:
        """Bytes of the whole batch (LOG_OVERHEAD + length)."""
        return self.length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        """Kafka's `DefaultRecordBatch.lastSequence` (wraps at Int32 max)."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (INT32_MAX + 1)

    def crc_ok(self, buf) -> bool:
        start = self.position + ATTRIBUTES_OFFSET
        with memoryview(buf) as view:
            return crc32c(view[start : self.position + self.size]) == self.crc

    def __repr__(self) -> str:
        return (
            f"BatchHeader(base_offset={self.base_offset}, last_offset={self.last_offset}, "
            f"size={self.size}, magic={self.magic}, codec={self.codec}, "
            f"records={self.record_count}, pid={self.producer_id})"
        )


def peek_size(buf, position: int = 0) -> int | None:
    """Size of the batch (or legacy message) at `position`, None if fewer than 12 bytes remain."""
    if len(buf) - position < LOG_OVERHEAD:
        return None
    return _LEN.unpack_from(buf, position)[1] + LOG_OVERHEAD


def magic_of(buf, position: int = 0) -> int:
    return buf[position + MAGIC_OFFSET]


def iter_headers(buf, start: int = 0, end: int | None = None) -> Iterator[BatchHeader]:
    """Every complete v2 batch header in buf[start:end]; stops at a partial batch.

    For trusted bytes (our own segments): lengths are not re-validated here.
    """
    end = len(buf) if end is None else end
    pos = start
    while end - pos >= HEADER_SIZE:
        h = BatchHeader(buf, pos)
        if h.length < MIN_BATCH_LENGTH or pos + h.size > end:
            return
        yield h
        pos += h.size


def set_base_offset(buf: bytearray, position: int, base_offset: int) -> None:
    _Q.pack_into(buf, position, base_offset)


def set_leader_epoch(buf: bytearray, position: int, epoch: int) -> None:
    _I.pack_into(buf, position + 12, epoch)


def recompute_crc(buf: bytearray, position: int, size: int) -> None:
    with memoryview(buf) as view:
        crc = crc32c(view[position + ATTRIBUTES_OFFSET : position + size])
    _CRC.pack_into(buf, position + CRC_OFFSET, crc)


def set_max_timestamp(
    buf: bytearray, position: int, size: int, log_append_time: bool, timestamp: int
) -> None:
    """Kafka's `DefaultRecordBatch.setMaxTimestamp`: set the timestamp type bit and the max
    timestamp, recomputing the CRC only when something changed."""
    attributes = _ATTR.unpack_from(buf, position + ATTRIBUTES_OFFSET)[0]
    new_attributes = (
        attributes | TIMESTAMP_TYPE_MASK if log_append_time else attributes & ~TIMESTAMP_TYPE_MASK
    )
    current = _Q.unpack_from(buf, position + MAX_TIMESTAMP_OFFSET)[0]
    if current == timestamp and new_attributes == attributes:
        return
    _ATTR.pack_into(buf, position + ATTRIBUTES_OFFSET, new_attributes)
    _Q.pack_into(buf, position + MAX_TIMESTAMP_OFFSET, timestamp)
    recompute_crc(buf, position, size)


def set_last_offset_delta(buf: bytearray, position: int, size: int, delta: int) -> None:
    """Used by the cleaner, which keeps a batch's last offset when it drops its tail records."""
    _I.pack_into(buf, position + 23, delta)
    recompute_crc(buf, position, size)
