"""Synthetic audit events in fauxka/controller/audit.py's format, for the tests and the benchmark.

Forwarded events (forwarded_by set) exist here before forwarding exists in the brokers."""

import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path

PRINCIPALS = ["User:ANONYMOUS", "User:alice", "User:bob", "User:etl-service"]
APIS = [("create_topics", "TOPIC", "CREATE"), ("delete_topics", "TOPIC", "DELETE"),
        ("create_partitions", "TOPIC", "CREATE_PARTITIONS"), ("incremental_alter_configs", "TOPIC", "ALTER_CONFIGS"),
        ("alter_client_quotas", "CLIENT_QUOTA", "ALTER")]
ERRORS = [(0, None, 80), (36, "Topic '{name}' already exists.", 6),
          (44, "Rule fauxka.policy.max.partitions: {n} partitions exceed the maximum of 2", 5),
          (44, "Rule fauxka.policy.topic.name.regex: '{name}' does not match ^[a-z]+$", 2),
          (44, "Topic name must start with the team prefix", 1),
          (7, None, 3), (37, "Number of partitions must be larger than 0.", 3)]


def event(ts: float, principal: str = "User:ANONYMOUS", api: str = "create_topics", *, receiving_broker: int = 1,
          forwarded_by: int | None = None, error_code: int = 0, error_message: str | None = None,
          validate_only: bool = False, latency_ms: float = 1.0, resource_name: str = "t",
          resource_type: str = "TOPIC", action: str = "CREATE", **extra) -> dict:
    """One audit line's object, every key fauxka/controller/audit.py writes."""
    return {"ts": ts, "principal": principal, "client_address": "127.0.0.1:50000",
            "receiving_broker": receiving_broker, "forwarded_by": forwarded_by, "api": api, "api_version": 7,
            "resource_type": resource_type, "resource_name": resource_name, "action": action,
            "validate_only": validate_only, "error_code": error_code, "error_message": error_message,
            "latency_ms": latency_ms, **extra}


def events(count: int, seed: int = 6, start_ts: float = 1_700_000_000.0, brokers: int = 3,
           per_second: float = 200.0) -> Iterator[dict]:
    """`count` plausible events: a third forwarded, some validate_only, errors of several kinds."""
    rng = random.Random(seed)
    codes, weights = ERRORS, [w for *_, w in ERRORS]
    for i in range(count):
        api, resource_type, action = rng.choice(APIS)
        code, message, _ = rng.choices(codes, weights)[0]
        name = f"topic-{rng.randrange(100_000)}"
        receiving = rng.randint(1, brokers)
        forwarded = rng.random() < 0.33 and brokers > 1
        latency = rng.lognormvariate(1.0, 0.8) * (2.5 if forwarded else 1.0) + (30_000 if code == 7 else 0)
        yield event(round(start_ts + i / per_second, 6), rng.choice(PRINCIPALS), api,
                    receiving_broker=receiving, forwarded_by=rng.randint(1, brokers) if forwarded else None,
                    error_code=code, error_message=message and message.format(name=name, n=rng.randint(3, 9)),
                    validate_only=rng.random() < 0.1, latency_ms=round(latency, 3), resource_name=name,
                    resource_type=resource_type, action=action)


def write(path: Path, items, extra_lines: list[str] = ()) -> Path:
    """JSON lines (gzip when the name ends in .gz), then `extra_lines` as they are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt") as f:
        for item in items:
            f.write(json.dumps(item, separators=(",", ":")) + "\n")
        for line in extra_lines:
            f.write(line + "\n")
    return path
