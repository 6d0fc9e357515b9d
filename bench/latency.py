"""Latency and CPU per request on the data plane: fauxka against Tansu in the same run.

For each side, round after round (the sides take turns going first):
- produce latency: one confluent-kafka producer, 100 B records to a 1-partition RF1 topic,
  linger.ms 0, acks=1, produce() then flush(), one at a time (as bench/dataplane.py's row);
- CPU per request: the partition leader's process CPU (user + system, /proc) over a loop of raw
  requests sent one at a time over one connection: Produce v9 (acks=1, one 100 B record) and
  Fetch v12 (max_wait 100 ms, from the offset before the end: one batch back; fauxka only, as
  Tansu answers a Fetch at its max_wait even with records there); divided by requests.
  With --profile the profiled round's CPU figures include cProfile's cost: take figures from a
  run without it.

    .venv/bin/python -m bench.latency [--rounds 3] [--samples 2000] [--no-tansu] [--profile DIR] [--base TREE]

--base TREE adds a third side, "before": a second 3-broker cluster started from TREE (a checkout of
the code before, e.g. `git worktree add TREE 10703d0` with .venv linked), up with the others for
the whole run and taking its turn in every round; a ratio is the median of the rounds' ratios.

--profile DIR starts fauxka's brokers with FAUXKA_PROFILE=DIR (fauxka/profiling.py) and brackets
each raw loop on the leader with SIGUSR1 / SIGUSR2: DIR gets broker-<pid>-1.prof (the Produce loop) and
-2.prof (the Fetch loop); read them with `python -m pstats`.
"""

import argparse
import asyncio
import json
import os
import signal
import statistics
import time
import uuid
from pathlib import Path

from aiokafka.record.default_records import DefaultRecordBatchBuilder
from confluent_kafka import Consumer

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import request_schema

from . import clients
from .common import local_cluster

NO_UUID = uuid.UUID(int=0)


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _batch(size: int) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 24)
    builder.append(0, int(time.time() * 1000), None, bytes(size), [])
    return bytes(builder.build())


def _produce(topic: str, size: int):
    return build(request_schema(0, 9), {"transactional_id": None, "acks": 1, "timeout": 30000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": _batch(size)}]}]})


def _fetch(topic: str, offset: int):
    return build(request_schema(1, 12), {
        "cluster_id": None, "replica_id": -1, "max_wait": 100, "min_bytes": 1, "max_bytes": 1 << 20,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1, "forgotten_topics_data": (), "rack_id": "",
        "topics": [{"topic": topic, "topic_id": NO_UUID, "partitions": [{
            "partition": 0, "current_leader_epoch": -1, "fetch_offset": offset, "last_fetched_epoch": -1,
            "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]})


async def raw_loops(address: str, topic: str, requests: int, pid: int, profile: bool,
                    fetches: bool = True) -> dict[str, float]:
    """µs of the leader's CPU per Produce and per Fetch, each sent `requests` times one at a time."""
    host, port = address.rsplit(":", 1)
    conn = await KafkaConnection.open(host, int(port), 10, client_id="bench-latency")
    out = {}
    try:
        produce = _produce(topic, 100)
        for _ in range(50):  # warm: connection, caches
            r = await conn.send(produce, 10)
        assert int(r.responses[0].partition_responses[0].error_code) == 0, r
        for name in ("produce", "fetch")[:2 if fetches else 1]:
            if name == "produce":
                request = produce
            else:  # from the last record produced: one batch back
                last = r.responses[0].partition_responses[0]
                assert int(last.error_code) == 0, last
                request = _fetch(topic, last.base_offset)
            if profile:
                os.kill(pid, signal.SIGUSR1)
                time.sleep(0.2)
            before, started = cpu_s(pid), time.perf_counter()
            for _ in range(requests):
                r = await conn.send(request, 10)
            wall, cpu = time.perf_counter() - started, cpu_s(pid) - before
            if profile:
                os.kill(pid, signal.SIGUSR2)
                time.sleep(0.5)
            if name == "fetch":
                assert int(r.error_code) == 0 and r.responses and r.responses[0].partitions[0].records, r
            out[f"{name}_cpu_us"] = cpu / requests * 1e6
            out[f"{name}_wall_us"] = wall / requests * 1e6
    finally:
        await conn.close()
    return out


def _leader(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-latency"})
    try:
        for _ in range(100):
            meta = consumer.list_topics(topic, timeout=10).topics[topic]
            if meta.partitions and meta.partitions[0].leader >= 0:
                return meta.partitions[0].leader
            time.sleep(0.1)
    finally:
        consumer.close()
    raise RuntimeError(f"no leader for {topic}")


def one_side(name: str, bootstrap: str, pid_of, samples: int, requests: int, profile: bool) -> dict:
    topic = f"latency-{uuid.uuid4().hex[:8]}"
    clients.create_topic(bootstrap, topic, 1, 1)
    leader = _leader(bootstrap, topic)
    address = bootstrap if name == "tansu" else bootstrap.split(",")[leader - 1]
    pid = pid_of(leader)
    before = cpu_s(pid)
    p50, p99 = clients.produce_latencies(bootstrap, topic, samples)
    out = {"produce_p50_ms": p50, "produce_p99_ms": p99,
           "client_produce_cpu_us": (cpu_s(pid) - before) / (samples + 1) * 1e6}
    # Tansu answers a Fetch only at its max_wait, even with records there: no CPU figure of its Fetch
    out.update(asyncio.run(raw_loops(address, topic, requests, pid, profile and name == "fauxka",
                                     fetches=name != "tansu")))
    clients.delete_topic(bootstrap, topic)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=2000, help="produce+flush latency samples per round")
    parser.add_argument("--requests", type=int, default=3000, help="raw requests per CPU figure per round")
    parser.add_argument("--no-tansu", action="store_true")
    parser.add_argument("--profile", metavar="DIR", help="profile the raw loops of this code's leader (first round)")
    parser.add_argument("--base", metavar="TREE", help="also a cluster of the code in TREE (the code before)")
    parser.add_argument("--json", metavar="FILE", help="append the rounds' medians as one JSON line")
    args = parser.parse_args(argv)
    if args.profile:
        os.environ["FAUXKA_PROFILE"] = str(Path(args.profile).resolve())
    import contextlib
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(local_cluster(3, ("zookeeper.session.timeout.ms=6000",)))
        sides = {"fauxka": (",".join(f"127.0.0.1:{p}" for p in cluster.ports.values()),
                            lambda b: cluster.pids()[b])}
        if args.base:
            before = stack.enter_context(local_cluster(3, ("zookeeper.session.timeout.ms=6000",), tree=Path(args.base)))
            sides["before"] = (",".join(f"127.0.0.1:{p}" for p in before.ports.values()), lambda b: before.pids()[b])
        if not args.no_tansu:
            from . import tansu
            bootstrap, process = stack.enter_context(tansu.broker())
            sides["tansu"] = (bootstrap, lambda _b: process.pid)
        rounds: dict[str, list[dict]] = {name: [] for name in sides}
        for n in range(args.rounds):
            order = list(sides)[n % len(sides):] + list(sides)[:n % len(sides)]  # each side first in turn
            for name in order:
                figures = one_side(name, *sides[name], args.samples, args.requests, args.profile and n == 0)
                rounds[name].append(figures)
                print(f"round {n + 1} {name}: " + ", ".join(f"{k} {v:.3g}" for k, v in figures.items()), flush=True)
    medians = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in rounds.items()}
    for name, m in medians.items():
        print(f"{name}: " + ", ".join(f"{k} {v:.3g}" for k, v in m.items()))
    for a, b in (("fauxka", "tansu"), ("before", "tansu"), ("fauxka", "before")):
        if a in rounds and b in rounds:
            print(f"{a} / {b} (median of the rounds' ratios): " + ", ".join(
                f"{k} {statistics.median(x[k] / y[k] for x, y in zip(rounds[a], rounds[b])):.2f}x"
                for k in rounds[a][0] if rounds[b][0].get(k)))
    if args.json:
        with open(args.json, "a") as out:
            out.write(json.dumps({"cwd": os.getcwd(), "medians": medians, "rounds": rounds}) + "\n")


if __name__ == "__main__":
    main()
