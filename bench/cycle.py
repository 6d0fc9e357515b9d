"""One integration test's Kafka work, as a test pointed at fauxka does it, step by step (issue 29):
create a topic (3 partitions), produce 10 keyed records of 100 B (acks=all) from a new producer,
read them back in a new consumer group, commit, close, delete the topic. confluent-kafka, every
client new each cycle, as a test makes its own.

    .venv/bin/python -m bench.cycle [--cycles 20] [--base TREE] [--tansu-cycles 1] [--no-mock]

Sides, in one run: fauxka (3 brokers, `fauxka up --detach`) with RF3 and RF1 topics; with
`--base TREE` (a checkout of the code before, venv linked) the same on that code, the two
clusters' rounds alternating; Tansu (one node, RF1) for `--tansu-cycles`; and librdkafka's own
mock cluster (`test.mock.num.brokers`, in this process, answering at once) as the client's floor.
Every step prints its median and max over the cycles:

- create: `create_topics()` until its answer; produce: a new producer, 10 records, `flush()`;
  usable: `create_topics()` answered until the first acks=all record is acknowledged;
- assigned: a new consumer's `subscribe()` until its first assignment; read: `subscribe()` until
  all 10 records are read; assigned->read: the part after the assignment;
- commit_close: `commit()` + `close()`; delete: `delete_topics()` until its answer;
- cycle: the whole, from the create to the delete's answer.
"""

import argparse
import contextlib
import json
import logging
import statistics
import time
import uuid
from pathlib import Path
from typing import Callable, Iterator

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from . import tansu
from .common import local_cluster

RECORDS = 10
PARTITIONS = 3
VALUE = b"v" * 100
STEPS = ("create", "produce", "usable", "assigned", "read", "assigned->read", "commit_close", "delete", "cycle")
STEP_TIMEOUT_S = 60


def one_cycle(bootstrap: str, replication: int, admin: AdminClient | None) -> dict[str, float]:
    """One cycle's steps in seconds; without `admin` (librdkafka's mock cluster, which answers no
    CreateTopics from another client) the producer's first Metadata creates the topic, and it stays."""
    topic = f"cycle-{uuid.uuid4().hex[:10]}"
    t: dict[str, float] = {}
    t["start"] = time.perf_counter()
    if admin is not None:
        admin.create_topics([NewTopic(topic, PARTITIONS, replication)])[topic].result(STEP_TIMEOUT_S)
    t["created"] = time.perf_counter()
    acks: list[float] = []
    errors: list = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(RECORDS):
        producer.produce(topic, key=f"key-{i}".encode(), value=VALUE,
                         on_delivery=lambda err, _m: errors.append(err) if err else acks.append(time.perf_counter()))
    if producer.flush(STEP_TIMEOUT_S) or errors:
        raise RuntimeError(f"produce to {topic} failed: {errors[:3]}")
    t["produced"] = time.perf_counter()
    assigned: list[float] = []
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    t["subscribe"] = time.perf_counter()
    consumer.subscribe([topic], on_assign=lambda _c, _p: assigned.append(time.perf_counter()))
    read = 0
    deadline = time.monotonic() + STEP_TIMEOUT_S
    while read < RECORDS:
        if time.monotonic() > deadline:
            raise TimeoutError(f"read {read} of {RECORDS} from {topic} within {STEP_TIMEOUT_S} s")
        msg = consumer.poll(1)
        if msg is not None and msg.error() is None:
            read += 1
    t["read"] = time.perf_counter()
    consumer.commit(asynchronous=False)
    consumer.close()
    t["closed"] = time.perf_counter()
    if admin is not None:
        admin.delete_topics([topic])[topic].result(STEP_TIMEOUT_S)
    t["deleted"] = time.perf_counter()
    steps = {
        "create": t["created"] - t["start"], "produce": t["produced"] - t["created"],
        "usable": acks[0] - t["created"], "assigned": assigned[0] - t["subscribe"],
        "read": t["read"] - t["subscribe"], "assigned->read": t["read"] - assigned[0],
        "commit_close": t["closed"] - t["read"], "delete": t["deleted"] - t["closed"],
        "cycle": t["deleted"] - t["start"],
    }
    if admin is None:
        for step in ("create", "delete", "cycle"):
            del steps[step]
    return steps


def cycles(bootstrap: str, replication: int, count: int, create: bool = True) -> list[dict[str, float]]:
    admin = AdminClient({"bootstrap.servers": bootstrap}) if create else None
    one_cycle(bootstrap, replication, admin)  # warm: the admin's connections, the offsets topic
    return [one_cycle(bootstrap, replication, admin) for _ in range(count)]


@contextlib.contextmanager
def mock_cluster() -> Iterator[str]:
    """librdkafka's in-process mock cluster (3 brokers), reachable over TCP by other clients while
    the client that made it lives; yields its bootstrap string."""
    lines: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    logger = logging.getLogger(f"bench.cycle.mock.{uuid.uuid4().hex}")
    logger.addHandler(_Keep())
    logger.setLevel(logging.DEBUG)
    owner = Producer({"test.mock.num.brokers": 3, "debug": "mock", "logger": logger})
    deadline = time.monotonic() + 10
    while not any("bootstrap.servers=" in line for line in lines):
        if time.monotonic() > deadline:
            raise TimeoutError("librdkafka's mock cluster did not say its bootstrap servers")
        owner.poll(0.05)
    line = next(line for line in lines if "bootstrap.servers=" in line)
    try:
        yield line.split("bootstrap.servers=", 1)[1].split()[0]
    finally:
        owner.flush(1)


def summary(samples: list[dict[str, float]]) -> dict[str, tuple[float, float]]:
    """step -> (median ms, max ms)."""
    return {s: (statistics.median(x[s] for x in samples) * 1000, max(x[s] for x in samples) * 1000)
                    for s in STEPS if samples and s in samples[0]}


def _print(label: str, samples: list[dict[str, float]]) -> None:
    figures = summary(samples)
    print(f"{label} ({len(samples)} cycles): " + "; ".join(f"{s} {m:.0f}/{x:.0f}" for s, (m, x) in figures.items()),
          flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20, help="cycles a side and replication factor")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of cycles (the sides alternate per round)")
    parser.add_argument("--base", metavar="TREE", help="a checkout of the code before: paired rounds")
    parser.add_argument("--tansu-cycles", type=int, default=1)
    parser.add_argument("--no-mock", action="store_true")
    parser.add_argument("--json", metavar="FILE", help="append every sample as one JSON line")
    args = parser.parse_args(argv)
    per_round = max(1, args.cycles // args.rounds)
    sides: dict[str, Path | None] = {"fauxka": None}
    if args.base:
        sides["before"] = Path(args.base).resolve()
    results: dict[str, list[dict[str, float]]] = {}
    for n in range(args.rounds):
        order = list(sides) if n % 2 == 0 else list(reversed(sides))
        for side in order:
            with local_cluster(3, tree=sides[side]) as cluster:
                bootstrap = ",".join(f"127.0.0.1:{p}" for p in cluster.ports.values())
                for rf in (3, 1):
                    label = f"{side} RF{rf}"
                    results.setdefault(label, []).extend(cycles(bootstrap, rf, per_round))
                    _print(f"round {n + 1}: {label}", results[label][-per_round:])
    if args.tansu_cycles:
        with tansu.broker() as (bootstrap, _process):
            label = f"tansu {tansu.version()} RF1"
            results[label] = cycles(bootstrap, 1, args.tansu_cycles)
            _print(label, results[label])
    if not args.no_mock:
        with mock_cluster() as bootstrap:
            results["librdkafka mock"] = cycles(bootstrap, 1, args.cycles, create=False)
            _print("librdkafka mock", results["librdkafka mock"])
    print("all rounds, step median/max in ms")
    for label, samples in results.items():
        _print(label, samples)
    if args.json:
        with open(args.json, "a") as out:
            out.write(json.dumps({"time": time.time(), "base": args.base, "results": results}) + "\n")


if __name__ == "__main__":
    main()
