"""Reading the request trace (fauxka/broker/request_trace.py): `fauxka trace on|off|show` and
fauxka.testing's Cluster.trace(). Each broker of a `fauxka up` cluster writes trace-<id>.jsonl in
the data dir while ZooKeeper's /fauxka/trace exists."""

import json
from pathlib import Path

FILTERS = ("broker", "api", "client_id", "principal", "fault")


def read(data_dir: Path, **filters) -> list[dict]:
    """Every traced request of the cluster in data_dir, oldest first; filters (api by its name, as
    `produce` or `list_offsets`; broker, client_id, principal, fault) keep the matching ones."""
    unknown = set(filters) - set(FILTERS)
    if unknown:
        raise ValueError(f"unknown trace filter {sorted(unknown)[0]!r}; one of {', '.join(FILTERS)}")
    wanted = {k: v for k, v in filters.items() if v is not None}
    entries = []
    for path in sorted(Path(data_dir).glob("trace-*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line being written
            if all(entry.get(k) == v for k, v in wanted.items()):
                entries.append(entry)
    return sorted(entries, key=lambda e: e["ts"])


def line(entry: dict) -> str:
    parts = "" if not entry["partitions"] else " " + ",".join(f"{t}-{p}" for t, p in entry["partitions"])
    errors = "forwarded" if entry["errors"] is None else ",".join(map(str, entry["errors"])) or "-"
    fault = f" fault={entry['fault']}" if entry.get("fault") else ""
    return (f"{entry['ts']:.3f} broker={entry['broker']} {entry['api']} v{entry['version']} "
            f"client_id={entry['client_id']} {entry['principal']}{parts} errors={errors}"
            f"{'' if entry['responded'] else ' (no response)'}{fault} {entry['latency_ms']}ms")
