"""`bench/run`: every fauxka benchmark in one command, each figure the median of several runs and
every comparison a ratio taken in the same run; prints a table and rewrites bench/README.md.

    .venv/bin/python -m bench.run [--runs 5] [--quick] [--dataplane-only]

The data-plane figures (bench/dataplane.py, against fauxka and Tansu) form the README's last
section; --dataplane-only measures them alone and leaves the rest of the README as it is.
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

from fauxka.broker.protocol.client import KafkaConnection
from fauxka import zookeeper

from .bulk_create import create_request
from . import costs, dataplane, dataplane_table, forwarding
from .groups import measure as group_figures
from .transactions import OVERRIDES as TXN_OVERRIDES, measure as txn_figures
from .common import cache_size, controller_of, delta, free_ports, local_cluster, wait_caches, zk_requests

TARGETS = {  # issue 7's targets on the 2-core machine
    "startup": "<= 2 s", "bulk": "<= 2 s", "ratio_median": "<= 1.5x", "ratio_p99": "<= 2x",
    "rate": ">= 2,000 req/s", "rss_idle": "<= 60 MB",
    "rebalance": "< 100 ms + heartbeat interval", "commits": ">= 10,000 /s",  # issue 12
    "transactions": ">= 500 /s",  # issue 13
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
    conn = await KafkaConnection.open("127.0.0.1", ports[controller], 10)
    bulk, everywhere, per_topic = [], [], []
    try:
        for run in range(runs):
            size = cache_size(metrics[controller])
            await asyncio.to_thread(wait_caches, cluster, *size)  # start from a quiet cluster
            before = zk_requests(metrics[controller])
            started = time.perf_counter()
            response = await conn.send(create_request([f"b{run}-{uuid.uuid4().hex[:6]}-{i}" for i in range(topics)],
                                                      3, 3), 120)
            bulk.append(time.perf_counter() - started)
            assert all(int(t.error_code) == 0 for t in response.topics)
            per_topic.append(sum(delta(zk_requests(metrics[controller]), before).values()) / topics)
            await asyncio.to_thread(wait_caches, cluster, size[0] + topics, size[1] + 3 * topics)
            everywhere.append(time.perf_counter() - started)
    finally:
        await conn.close()

    singles_s = []
    for _ in range(runs):
        await asyncio.to_thread(wait_caches, cluster, *cache_size(metrics[controller]))
        singles_s.append(await single_creates(ports[controller], singles, 16))
    figures = {"bulk": statistics.median(bulk), "bulk_everywhere": statistics.median(everywhere),
               "zk_per_topic": statistics.median(per_topic), "singles": statistics.median(singles_s)}
    await asyncio.to_thread(wait_caches, cluster, *cache_size(metrics[controller]))
    await forwarding.warm_up(ports)
    for clients in (1, 64):
        figures[f"lat{clients}"] = await forwarding.compare(cluster, clients, runs)
    figures["v4"] = await forwarding.compare(cluster, 64, runs, version=4)
    return figures
async def single_creates(port: int, topics: int, clients: int) -> float:
    """Seconds for `topics` single-topic CreateTopics (1 partition, RF 1), spread over `clients`."""
    async def client(c: int) -> None:
        conn = await KafkaConnection.open("127.0.0.1", port, 10)
        try:
            for i in range(c, topics, clients):
                response = await conn.send(create_request([f"s{i}-{uuid.uuid4().hex[:6]}"], 1, 1), 30)
                assert int(response.topics[0].error_code) == 0, response
        finally:
            await conn.close()

    started = time.perf_counter()
    await asyncio.gather(*(client(c) for c in range(clients)))
    return time.perf_counter() - started


def machine() -> str:
    mem_kb = int(next(line for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal")).split()[1])
    zk = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "zookeeper"], capture_output=True, text=True).stdout
    return (f"{subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()} cores, "
            f"{mem_kb / 1024 / 1024:.0f} GiB; Python {platform.python_version()}, kio {version('kio')}, "
            f"kazoo {version('kazoo')}, uvloop {version('uvloop')}, ZooKeeper {zk or '?'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="100 topics instead of 1,000 (a smoke run)")
    parser.add_argument("--dataplane-only", action="store_true",
                        help="only the data-plane section (produce, consume, latency, failover against Tansu)")
    args = parser.parse_args()
    if args.dataplane_only:
        dataplane.run_and_write(args.runs, args.quick)
        return
    topics, singles = (100, 160) if args.quick else (1000, 1000)
    startup = timed_startups(args.runs)
    with tempfile.TemporaryDirectory(prefix="fauxka-bench-zk-") as tmp:
        zk_port = free_ports()
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
        ("  until every broker's cache holds them", f"{figures['bulk_everywhere']:.2f} s", ""),
        (f"{singles} single-topic CreateTopics from 16 clients", f"{figures['singles']:.2f} s", ""),
        ("ZooKeeper round trips per created topic (controller)", f"{figures['zk_per_topic']:.2f}", ""),
    ]
    for clients in (1, 64):
        f = figures[f"lat{clients}"]
        rows.append((f"validate_only latency, {clients} client(s): direct median / p99",
                     f"{f['direct_median']:.2f} / {f['direct_p99']:.2f} ms", ""))
        rows.append(("  forwarded median / p99 (ratio)",
                     f"{f['forwarded_median']:.2f} / {f['forwarded_p99']:.2f} ms "
                     f"({f['ratio_median']:.2f}x / {f['ratio_p99']:.2f}x)",
                     f"{TARGETS['ratio_median']} / {TARGETS['ratio_p99']}"))
    rows.append(("validate_only CreateTopics v7, 64 clients, direct", f"{figures['lat64']['direct_rate']:.0f} req/s",
                 TARGETS["rate"]))
    rows.append(("  the same, forwarded", f"{figures['lat64']['forwarded_rate']:.0f} req/s", ""))
    rows.append(("  v4 (librdkafka's version: no configs in the answer), direct / forwarded",
                 f"{figures['v4']['direct_rate']:.0f} / {figures['v4']['forwarded_rate']:.0f} req/s", ""))
    f64, f4, f1 = figures["lat64"], figures["v4"], figures["lat1"]
    (enc7, configs), (enc4, _) = costs.encode_ms(7), costs.encode_ms(4)
    rows.append(("controller CPU per validate_only CreateTopics, v7 / v4 (64 clients)",
                 f"{f64['controller_cpu_ms']:.3f} / {f4['controller_cpu_ms']:.3f} ms", ""))
    rows.append((f"  of which kio encodes the answer, v7 ({configs} configs) / v4",
                 f"{enc7:.3f} / {enc4:.3f} ms", ""))
    rows.append(("forwarding broker CPU per forwarded request (1 client)", f"{f1['forwarder_cpu_ms']:.3f} ms", ""))
    trip_us, trip_cpu_us = costs.loopback_round_trip_us()
    rows.append(("loopback TCP round trip between two processes (wall / one side's CPU)",
                 f"{trip_us:.0f} / {trip_cpu_us:.0f} µs", ""))
    rows.append(("broker RSS idle (max of 3)", f"{max(idle.values()):.0f} MB", TARGETS["rss_idle"]))
    rows.append(("broker RSS after the benchmarks (max of 3)", f"{max(loaded.values()):.0f} MB", ""))
    with local_cluster(3, ("offsets.topic.num.partitions=3",)) as cluster:
        groups = asyncio.run(group_figures(cluster.ports, args.runs, 5))
    for n in (2, 8, 32):
        rows.append((f"group rebalance, {n} members: last join to every member synced (coordinator's share)",
                     f"{groups[f'rebalance_ms_n{n}']:.1f} ms", TARGETS["rebalance"] if n == 8 else ""))
    for c in (1, 16, 64):
        rows.append((f"offset commits (acks=all, RF3) on one coordinator, {c} connection(s)",
                     f"{groups[f'commits_per_s_c{c}']:.0f} /s", TARGETS["commits"] if c == 64 else ""))
    with local_cluster(3, TXN_OVERRIDES) as cluster:
        txn = txn_figures(",".join(f"127.0.0.1:{port}" for port in cluster.ports.values()), 10, cluster)
    rows.append(("transactions, one confluent-kafka producer, 10 records over 3 partitions (RF3)",
                 f"{txn['transactions/s']:.0f} /s", TARGETS["transactions"]))
    rows.append(("  commit_transaction median / p99; brokers' CPU per transaction (3 processes)",
                 f"{txn['commit ms median']:.1f} / {txn['commit ms p99']:.1f} ms; "
                 f"{txn['broker cpu ms per transaction']:.1f} ms", ""))
    table = ["| measure | result | target |", "|---|---|---|"] + [f"| {a} | {b} | {c} |" for a, b, c in rows]
    print("\n".join(table))
    readme = Path(__file__).with_name("README.md")
    kept = dataplane_table.hand_run_sections(readme.read_text()) if readme.exists() else ""
    dataplane.run_and_write(args.runs, args.quick, "\n".join([
        "# fauxka benchmarks", "",
        "Regenerated by `.venv/bin/python -m bench.run` (`bench/run`); do not edit by hand, except the "
        "sections marked hand-run, which it keeps.", "",
        f"Machine: {machine()}.", f"Runs per figure: {args.runs} (median); {'quick' if args.quick else 'full'} run.",
        "", *table, "",
        *METHOD, "", kept, ""]))


METHOD = """Method:
- Every cluster is started with `fauxka up --detach` (ZooKeeper and 3 brokers, or 3 brokers
  against a ZooKeeper already serving) on free loopback ports; ready means Metadata answers on
  every broker with a controller elected.
- Each bulk CreateTopics starts from a quiet cluster (every broker's cache holds what the
  controller's does, read from the `fauxka_metadata_topics` / `_partitions` gauges) and blocks
  until the controller's cache shows every partition with a leader, as Kafka's does; the next
  row waits on until every broker's cache holds the new topics. Round trips per topic are the
  controller's `fauxka_zookeeper_requests` during that request.
- Latencies and rates come from `bench/load.py`: one connection per client, one request in
  flight each, every request encoded before the clock starts and every answer decoded and
  checked after it stops. Each round sends the same load straight to the controller (direct)
  and then through another broker (forwarded); a figure is the median over the rounds, a ratio
  the median of the rounds' ratios. CPU per request is the broker process's user + system time
  (/proc/<pid>/stat) over a round divided by its requests. The benchmark client shares the 2 cores.
- v7 is what Kafka's Java AdminClient sends and its answer carries the topic's configs; v4 is
  what librdkafka (confluent-kafka) sends; kafka-python and aiokafka send v3. The kio encode
  cost is measured in the benchmark process on the same answer.
- RSS is each broker's VmRSS, idle after start and again after every benchmark above.
- The machine is a shared VM: the same commit's figures move by up to a factor 2 between runs
  of this command (the kio encode and loopback rows, pure CPU and kernel measurements, move with
  them), which is why every comparison is a ratio taken within one round.
- Groups (`bench/groups.py`, its own 3-broker cluster, `__consumer_offsets` with 3 partitions and
  RF3, `group.initial.rebalance.delay.ms=0`): N-1 members Stable, the N-th joins, the others
  hear of it from a heartbeat sent at once and rejoin; the figure is the time until every member
  has its SyncGroup answer (a client's heartbeat interval comes on top). Commits: C connections
  each sending OffsetCommit v8 back to back (simple consumer, one partition each) for 5 s.
- Transactions (`bench/transactions.py`, its own 3-broker cluster, `__transaction_state` with 3
  partitions and RF3): one confluent-kafka transactional producer (linger 0) for 10 s, each
  transaction 10 records of 100 B over 3 partitions then commit_transaction, back to back.
Individual benchmarks: `python -m bench.bulk_create`, `python -m bench.forwarding`, `python -m bench.dataplane`,
`python -m bench.report_bench`, `python -m bench.groups`, `python -m bench.transactions`.""".splitlines()


if __name__ == "__main__":
    main()
