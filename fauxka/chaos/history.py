"""The run's history: JSON lines, one event a line, each with `t` (Unix seconds) and `type`:

    run     seed, schedule, topics, settings (first line)
    fault   phase start|end|failed, step, nemesis, broker, peer, partition, error
    send    workload, producer, value, topic, partition
    ack     value, topic, partition, offset (a delivery report without error)
    fail    value, error (a delivery report with one: the record's fate is unknown)
    poll    consumer, isolation, topic, partition, offset, value, static (a consumer that never seeks)
    txn     phase begin|commit|abort, txn, values, inputs, ok, error
    commit  group, member, generation, offsets {partition: offset}, ok, error
    read    the final read-back: isolation, topic, partition, offset, value
    end     the final read-back's end: isolation, topic, partition, high (the high watermark)
    group_offsets   group, topic, offsets {partition: offset} (committed, read at the end)
    note    anything else worth a line (settled, drained, a group member's assign/revoke/lost with
            its generation and partitions, a consumer error, ...)
"""

import json
import threading
import time
from pathlib import Path


class History:
    """Thread-safe: workloads' callbacks and the nemesis record from their own threads."""

    def __init__(self, path: Path | None = None):
        self.events: list[dict] = []
        self._lock = threading.Lock()
        self._file = open(path, "w") if path is not None else None

    def record(self, type_: str, at: float | None = None, **fields) -> dict:
        """`at`: when it happened, if earlier than now (a fault's start, once it is in force)."""
        event = {"t": round(at if at is not None else time.time(), 6), "type": type_, **fields}
        with self._lock:
            self.events.append(event)
            if self._file is not None:
                self._file.write(json.dumps(event) + "\n")
        return event

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def load(path: Path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]
