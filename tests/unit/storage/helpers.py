"""Batches built by real client libraries (aiokafka's C builder, kafka-python's)."""

from __future__ import annotations

import time

from aiokafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from aiokafka.record.legacy_records import LegacyRecordBatchBuilder

CODECS = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def now_ms() -> int:
    return int(time.time() * 1000)


def v2(
    n: int = 3,
    codec: int = 0,
    *,
    pid: int = -1,
    epoch: int = -1,
    seq: int = -1,
    keys: list | None = None,
    values: list | None = None,
    ts: int | None = None,
    transactional: bool = False,
    headers: list | None = None,
) -> bytes:
    b = DefaultRecordBatchBuilder(2, codec, int(transactional), pid, epoch, seq, 2**31 - 1)
    ts = now_ms() if ts is None else ts
    for i in range(n):
        key = keys[i] if keys is not None else f"k{i}".encode()
        value = values[i] if values is not None else b"v" * 100
        b.append(i, ts + i, key, value, headers or [])
    return bytes(b.build())


def kafka_python_v2(n: int = 3, codec: int = 0, ts: int | None = None) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder as KB

    b = KB(2, codec, 0, -1, -1, -1, 2**31 - 1)
    ts = now_ms() if ts is None else ts
    for i in range(n):
        b.append(i, ts + i, f"k{i}".encode(), b"v" * 100, [])
    return bytes(b.build())


def legacy(magic: int, n: int = 3, codec: int = 0, ts: int | None = None, keys=None) -> bytes:
    b = LegacyRecordBatchBuilder(magic, codec, 2**31 - 1)
    ts = now_ms() if ts is None else ts
    for i in range(n):
        key = keys[i] if keys is not None else f"k{i}".encode()
        b.append(i, ts + i, key, f"value-{i}".encode())
    return bytes(b.build())


def records_of(data: bytes) -> list:
    """(offset, timestamp, key, value, headers) of every record in back-to-back v2 batches."""
    out, pos = [], 0
    while pos < len(data):
        size = int.from_bytes(data[pos + 8 : pos + 12], "big") + 12
        batch = DefaultRecordBatch(data[pos : pos + size])
        assert batch.validate_crc()
        out += [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch]
        pos += size
    return out


def batch_of(data: bytes) -> DefaultRecordBatch:
    return DefaultRecordBatch(data)


def with_codec(uncompressed: bytes, codec: int, compress) -> bytes:
    """The same batch with its records section compressed by `compress` (as another client
    library would: raw snappy like librdkafka, framed lz4, plain zstd)."""
    from fauxka.storage import batch as B

    body = bytes(compress(uncompressed[61:]))
    buf = bytearray(uncompressed[:61]) + body
    buf[8:12] = (len(buf) - 12).to_bytes(4, "big")
    attributes = int.from_bytes(buf[21:23], "big") | codec
    buf[21:23] = attributes.to_bytes(2, "big")
    B.recompute_crc(buf, 0, len(buf))
    return bytes(buf)
