"""Append throughput of storage/: 100-byte records, uncompressed and lz4, in memory and on disk.

Batches are built once (aiokafka's builder, as a producer would send them) and appended as a
leader again and again; the figure is records appended per second of wall time, including the
CRC check, offset/epoch patching, the write and the index update. Run:
`.venv/bin/python -m bench.storage_append [--records-per-batch N] [--seconds S]`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from aiokafka.record.default_records import DefaultRecordBatchBuilder

from fauxka.storage import batch as B
from fauxka.storage.config import LogConfig
from fauxka.storage.log import PartitionLog


def batch(records: int, codec: int) -> bytes:
    b = DefaultRecordBatchBuilder(2, codec, 0, -1, -1, -1, 2**31 - 1)
    now = int(time.time() * 1000)
    payload = os.urandom(50).hex().encode()  # 100 bytes, not trivially compressible
    for i in range(records):
        b.append(i, now, None, payload, [])
    return bytes(b.build())


def run(directory: str | None, codec: int, per_batch: int, seconds: float) -> tuple[float, float]:
    """(records/s appended, records/s read back in 1 MiB reads, as a consumer's fetches);
    the log is emptied every 128 MB so that memory and disk stay bounded."""
    config = LogConfig(segment_bytes=256 * 1024 * 1024, retention_ms=-1)
    log = PartitionLog.load("bench", 0, config, directory)
    data = batch(per_batch, codec)
    records = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        if log.size_bytes > 128 * 1024 * 1024:
            log.truncate_fully_and_start_at(log.log_end_offset)
        for _ in range(50):
            log.append_as_leader(data, 1, int(time.time() * 1000))
            records += per_batch
    appended = records / (time.perf_counter() - started)
    offset, read = log.log_start_offset, 0
    started = time.perf_counter()
    while offset < log.log_end_offset:
        chunk = log.read(offset, 1024 * 1024, log.log_end_offset, True)
        last = B.BatchHeader(chunk, len(chunk) - len(data)) if len(data) <= len(chunk) else None
        offset = last.next_offset if last else log.log_end_offset
        read += len(chunk) // len(data) * per_batch
    read_rate = read / max(time.perf_counter() - started, 1e-9)
    log.close()
    return appended, read_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records-per-batch", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    print(f"storage append and read, 100-byte records, {args.records_per_batch} records per batch")
    for codec, name in ((0, "uncompressed"), (3, "lz4")):
        for mode in ("in-memory", "on-disk"):
            with tempfile.TemporaryDirectory() as tmp:
                directory = None if mode == "in-memory" else os.path.join(tmp, "bench-0")
                appended, read = run(directory, codec, args.records_per_batch, args.seconds)
            print(
                f"  {name:13s} {mode:9s} append {appended:>12,.0f} records/s"
                f" ({appended * 100 / 1e6:,.1f} MB/s of values)   read {read:>12,.0f} records/s"
            )


if __name__ == "__main__":
    main()
