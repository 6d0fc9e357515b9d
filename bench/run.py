"""`bench/run`: every fauxka benchmark in one command, each figure the median of several runs and
every comparison a ratio taken in the same run; prints a table and rewrites bench/README.md.

    .venv/bin/python -m bench.run [--runs 3] [--quick]
"""

import argparse
import asyncio
import platform
import statistics
import subprocess
import tempfile
import time
import uuid
from importlib.metadata import version
from pathlib import Path

from broker.protocol.client import KafkaConnection
from fauxka import zookeeper

from .bulk_create import create_request
from .common import controller_of, delta, free_port, local_cluster, zk_requests
from .forwarding import latencies, p

TARGETS = {  # issue 7's targets on the 2-core machine
    "startup": "<= 2 s", "bulk": "<= 2 s", "ratio_median": "<= 1.5x", "ratio_p99": "<= 2x",
    "rate": ">= 2,000 req/s", "rss_idle": "<= 60 MB",
}


def timed_startups(runs: int, zk_connect: str | None = None) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        with local_cluster(3, zookeeper=zk_connect and f"{zk_connect}/bench-{uuid.uuid4().hex[:6]}"):
            times.append(time.perf_counter() - started)
    return statistics.median(times)


async def admin_figures(cluster, runs: int, topics: int, singles: int) -> dict:
    ports, metrics = cluster.ports, cluster.metrics
    controller = await controller_of(ports[1])
    other = next(b for b in ports if b != controller)
    conn = await KafkaConnection.open("127.0.0.1", ports[controller], 10)
    bulk, per_topic = [], []
    try:
        for run in range(runs):
            before = zk_requests(metrics[controller])
            started = time.perf_counter()
            response = await conn.send(create_request([f"b{run}-{uuid.uuid4().hex[:6]}-{i}" for i in range(topics)],
                                                      3, 3), 120)
            bulk.append(time.perf_counter() - started)
            assert all(int(t.error_code) == 0 for t in response.topics)
            per_topic.append(sum(delta(zk_requests(metrics[controller]), before).values()) / topics)
    finally:
        await conn.close()

    async def single_creates(client: int) -> None:
        c = await KafkaConnection.open("127.0.0.1", ports[controller], 10)
        try:
            for i in range(singles // 16):
                await c.send(create_request([f"s{client}-{i}-{uuid.uuid4().hex[:6]}"], 1, 1), 30)
        finally:
            await c.close()

    started = time.perf_counter()
    await asyncio.gather(*(single_creates(c) for c in range(16)))
    singles_s = time.perf_counter() - started
    figures = {"bulk": statistics.median(bulk), "zk_per_topic": statistics.median(per_topic), "singles": singles_s}
    for clients in (1, 64):
        direct = await latencies(ports[controller], clients, 640)
        started = time.perf_counter()
        forwarded = await latencies(ports[other], clients, 640)
        forwarded_rate = len(forwarded) / (time.perf_counter() - started)
        figures[f"lat{clients}"] = (statistics.median(direct) * 1000, p(direct, .99),
                                    statistics.median(forwarded) * 1000, p(forwarded, .99))
    started = time.perf_counter()
    count = len(await latencies(ports[controller], 64, 2560))
    figures["rate"] = count / (time.perf_counter() - started)
    figures["forwarded_rate"] = forwarded_rate
    return figures


def machine() -> str:
    mem_kb = int(next(line for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal")).split()[1])
    zk = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "zookeeper"], capture_output=True, text=True).stdout
    return (f"{subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores, "
            f"{mem_kb / 1024 / 1024:.0f} GiB; Python {platform.python_version()}, kio {version('kio')}, "
            f"kazoo {version('kazoo')}, uvloop {version('uvloop')}, ZooKeeper {zk or '?'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100 topics instead of 1,000 (a smoke run)")
    args = parser.parse_args()
    topics, singles = (100, 160) if args.quick else (1000, 1000)
    startup = timed_startups(args.runs)
    with tempfile.TemporaryDirectory(prefix="fauxka-bench-zk-") as tmp:
        zk_port = free_port()
        zk = zookeeper.start(Path(tmp), zk_port)
        try:
            zookeeper.wait_serving("127.0.0.1", zk_port, 30, zk)
            brokers_only = timed_startups(args.runs, f"127.0.0.1:{zk_port}")
        finally:
            zk.terminate()
            zk.wait(10)
    with local_cluster(3) as cluster:
        time.sleep(1)
        idle = cluster.rss_mb()
        figures = asyncio.run(admin_figures(cluster, args.runs, topics, singles))
        loaded = cluster.rss_mb()
    rows = [
        ("fauxka up: ZooKeeper + 3 brokers ready", f"{startup:.2f} s", TARGETS["startup"]),
        ("3 brokers against a running ZooKeeper", f"{brokers_only:.2f} s", ""),
        (f"one CreateTopics of {topics} topics x 3 x RF3, blocking", f"{figures['bulk']:.2f} s", TARGETS["bulk"]),
        (f"{singles} single-topic CreateTopics from 16 clients", f"{figures['singles']:.2f} s", ""),
        ("ZooKeeper round trips per created topic (controller)", f"{figures['zk_per_topic']:.2f}", ""),
    ]
    for clients in (1, 64):
        d50, d99, f50, f99 = figures[f"lat{clients}"]
        rows.append((f"validate_only latency, {clients} client(s): direct median / p99",
                     f"{d50:.2f} / {d99:.2f} ms", ""))
        rows.append(("  forwarded median / p99 (ratio)",
                     f"{f50:.2f} / {f99:.2f} ms ({f50 / d50:.2f}x / {f99 / d99:.2f}x)",
                     f"{TARGETS['ratio_median']} / {TARGETS['ratio_p99']}"))
    rows.append(("validate_only CreateTopics, 64 clients, direct", f"{figures['rate']:.0f} req/s", TARGETS["rate"]))
    rows.append(("  the same, forwarded", f"{figures['forwarded_rate']:.0f} req/s", ""))
    rows.append(("broker RSS idle (max of 3)", f"{max(idle.values()):.0f} MB", TARGETS["rss_idle"]))
    rows.append(("broker RSS after the benchmarks (max of 3)", f"{max(loaded.values()):.0f} MB", ""))
    table = ["| measure | result | target |", "|---|---|---|"] + [f"| {a} | {b} | {c} |" for a, b, c in rows]
    print("\n".join(table))
    Path(__file__).with_name("README.md").write_text("\n".join([
        "# fauxka benchmarks", "",
        "Regenerated by `.venv/bin/python -m bench.run` (`bench/run`); do not edit by hand.", "",
        f"Machine: {machine()}.", f"Runs per figure: {args.runs} (median); {'quick' if args.quick else 'full'} run.",
        "", *table, "",
        "Method: each cluster is started with `fauxka up --detach` on free loopback ports; latencies are",
        "single-topic validate_only CreateTopics from clients with one connection each, sent straight to",
        "the controller (direct) or to another broker (forwarded), measured in the same run; round trips",
        "come from the controller's `fauxka_zookeeper_requests` metric; RSS is each broker's VmRSS.",
        "Individual benchmarks: `python -m bench.bulk_create`, `python -m bench.forwarding`,",
        "`python -m bench.report_bench`.", ""]))


if __name__ == "__main__":
    main()
