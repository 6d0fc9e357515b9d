"""Down-conversion of v2 record batches to magic 0/1 message sets for Fetch v0-v3.

Kafka 3.x keeps every log in magic 2 and, for a fetch version that cannot read it (v0-v1: magic
0, v2-v3: magic 1), converts what it read (`KafkaApis.maybeConvertFetchedData` ->
`RecordsUtil.downConvert`):

- control batches are dropped; a zstd batch cannot be converted (UNSUPPORTED_COMPRESSION_TYPE);
- an uncompressed batch keeps only the records at or after the fetch offset (old messages are not
  batched); a compressed batch keeps all its records (the consumer skips the earlier ones) and
  becomes one wrapper message with the batch's codec (`Compression.of(batch.compressionType())`);
- headers are dropped; magic 0 has no timestamps; magic 1 keeps each record's timestamp, and a
  LogAppendTime batch sets the timestamp-type attribute and gives uncompressed records (and a
  wrapper) the batch's max timestamp (`MemoryRecordsBuilder.appendLegacyRecord`);
- inner offsets of a magic 1 wrapper are relative to its first record, of magic 0 absolute; the
  wrapper carries the last offset and (magic 1) the max timestamp or the LogAppendTime.

Kafka sends this lazily in chunks (KIP-283 `LazyDownConversionRecords`); here the converted bytes
are built at once, which a client cannot tell apart. Messages are encoded with aiokafka's legacy
builder; codecs are aiokafka's (cramjam): gzip, xerial-framed snappy, lz4 frame.
"""

from __future__ import annotations

import zlib

from aiokafka.codec import gzip_encode, lz4_encode, snappy_encode
from aiokafka.record.legacy_records import LegacyRecordBatchBuilder

from . import batch as B
from . import records as R
from .errors import ErrorCode, StorageError

_ZSTD = 4
_TS_TYPE = 0x08  # the magic 1 attribute bit for LogAppendTime
_ENCODERS = {1: gzip_encode, 2: snappy_encode, 3: lz4_encode}
_UNBOUNDED = 2**31 - 1


def down_convert(buf, magic: int, first_offset: int) -> tuple[bytes, int]:
    """The v2 batches in `buf` (complete ones; a trailing partial batch is left out) as a magic
    `magic` (0 or 1) message set, as `RecordsUtil.downConvert(batches, magic, first_offset)`, and
    how many records were converted (Kafka's `RecordValidationStats.numRecordsConverted`)."""
    out = bytearray()
    converted = 0
    for h in B.iter_headers(buf):
        if h.is_control:
            continue
        if h.codec == _ZSTD:
            raise StorageError(ErrorCode.unsupported_compression_type,
                               "Down-conversion of zstandard-compressed batches is not supported")
        records = R.decode(buf, h)
        if not h.codec:
            records = [r for r in records if h.base_offset + r.offset_delta >= first_offset]
        if records:
            out += _convert(h, records, magic)
            converted += len(records)
    return bytes(out), converted


def _convert(h: B.BatchHeader, records: list[R.Record], magic: int) -> bytearray:
    append_time = h.max_timestamp if h.log_append_time else None
    bit = _TS_TYPE if magic == 1 and append_time is not None else 0
    base = h.base_offset + records[0].offset_delta
    inner = LegacyRecordBatchBuilder(magic, 0, _UNBOUNDED)
    for r in records:
        offset = h.base_offset + r.offset_delta
        timestamp = append_time if append_time is not None and not h.codec else r.timestamp
        inner.append(offset - base if h.codec and magic == 1 else offset, timestamp, r.key, r.value)
    messages = inner.build()
    if bit:
        _mark_each(messages)
    if not h.codec:
        return messages
    last = h.base_offset + records[-1].offset_delta
    wrapper_time = append_time if append_time is not None else h.max_timestamp
    value = _ENCODERS[h.codec](bytes(messages))
    return _wrapper(magic, last, wrapper_time, h.codec | bit, value)


def _wrapper(magic: int, offset: int, timestamp: int, attributes: int, value: bytes) -> bytearray:
    """One message holding a compressed message set (no key), in Kafka's legacy layout."""
    body = bytearray([magic, attributes])
    if magic == 1:
        body += timestamp.to_bytes(8, "big", signed=True)
    body += (-1).to_bytes(4, "big", signed=True) + len(value).to_bytes(4, "big") + value
    return bytearray(offset.to_bytes(8, "big", signed=True) + (len(body) + 4).to_bytes(4, "big")
                     + _crc32(body).to_bytes(4, "big") + body)


def _mark_each(messages: bytearray) -> None:
    """Set the LogAppendTime attribute bit on each magic 1 message and recompute its CRC."""
    pos = 0
    while pos < len(messages):
        size = int.from_bytes(messages[pos + 8 : pos + 12], "big")
        messages[pos + 17] |= _TS_TYPE
        crc = _crc32(messages[pos + 16 : pos + 12 + size])
        messages[pos + 12 : pos + 16] = crc.to_bytes(4, "big")
        pos += 12 + size


def _crc32(data) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF
