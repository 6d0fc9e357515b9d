"""Benchmark: one CreateTopics of 1,000 topics x 3 partitions x RF 3 (blocking), and 100
single-topic creates. Prints wall times and the controller's ZooKeeper round trips, and when
every broker's Metadata lists all the bulk topics with a leader for every partition (issue 25's
row "1000 topics x3 RF3 acked / in every broker's Metadata"; polled from the answer on, every
50 ms per broker).

    .venv/bin/python -m bench.bulk_create [--topics 1000] [--singles 100] [--tree TREE]

--tree TREE runs the cluster from another checkout (the code before; see bench/common.py).
--profile DIR writes a cProfile of every broker from the bulk request until every broker's
Metadata lists its topics (read with `python -m pstats`).
A new topic usable by a client (create_topics() to the first acknowledged produce) is
`python -m bench.paired`'s row.
"""

import argparse
import asyncio
import os
import signal
import time
import uuid
from pathlib import Path

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import request_schema

from .common import controller_of, delta, local_cluster, zk_requests


def create_request(names: list[str], partitions: int, replication: int, timeout_ms: int = 60000):
    return build(request_schema(19, 7), {
        "topics": [{"name": n, "num_partitions": partitions, "replication_factor": replication,
                    "assignments": [], "configs": []} for n in names],
        "timeout": timeout_ms, "validate_only": False})


async def everywhere(ports: dict[int, int], names: list[str], started: float) -> dict[int, float]:
    """Seconds from `started` until each broker's Metadata lists every topic of `names` with 3
    partitions, each with a leader."""
    wanted = set(names)
    request = build(request_schema(3, 12), {"topics": [{"name": n, "topic_id": None} for n in names],
                                            "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False})

    async def poll(port: int) -> float:
        conn = await KafkaConnection.open("127.0.0.1", port, 30)
        try:
            while True:
                md = await conn.send(request, 300)
                done = {t.name for t in md.topics if int(t.error_code) == 0 and len(t.partitions) == 3
                        and all(p.leader_id >= 0 for p in t.partitions)}
                if done >= wanted:
                    return time.perf_counter() - started
                await asyncio.sleep(0.05)
        finally:
            await conn.close()

    results = await asyncio.gather(*(poll(port) for port in ports.values()))
    return dict(zip(ports, results))


async def run(topics: int, singles: int, ports: dict[int, int], metrics: dict[int, int], profile=None) -> None:
    """`profile(signal)`, when given, signals every broker: SIGUSR1 before the bulk CreateTopics,
    SIGUSR2 once every broker's Metadata lists its topics (bench.latency's profile window)."""
    controller = await controller_of(ports[1])
    conn = await KafkaConnection.open("127.0.0.1", ports[controller], 10)
    prefix = uuid.uuid4().hex[:6]
    try:
        before = zk_requests(metrics[controller])
        names = [f"bulk-{prefix}-{i}" for i in range(topics)]
        if profile:
            profile(signal.SIGUSR1)
            await asyncio.sleep(0.2)
        started = time.perf_counter()
        response = await conn.send(create_request(names, 3, 3), 120)
        bulk_s = time.perf_counter() - started
        bulk_zk = delta(zk_requests(metrics[controller]), before)
        failed = [t for t in response.topics if int(t.error_code) != 0]
        seen_s = await asyncio.wait_for(everywhere(ports, names, started), 600)
        if profile:
            profile(signal.SIGUSR2)
            await asyncio.sleep(1.0)

        before = zk_requests(metrics[controller])
        started = time.perf_counter()
        for i in range(singles):
            single = await conn.send(create_request([f"single-{prefix}-{i}"], 3, 3), 30)
            failed += [t for t in single.topics if int(t.error_code) != 0]
        singles_s = time.perf_counter() - started
        singles_zk = delta(zk_requests(metrics[controller]), before)
    finally:
        await conn.close()
    print(f"{'benchmark':<44} {'wall s':>8} {'zk multi':>9} {'zk write':>9} {'zk read':>8}")
    print(f"{f'1 CreateTopics of {topics} topics x 3 x RF3':<44} {bulk_s:>8.2f} {bulk_zk['multi']:>9} "
          f"{bulk_zk['write']:>9} {bulk_zk['read']:>8}")
    print(f"{f'{singles} single-topic CreateTopics (sequential)':<44} {singles_s:>8.2f} {singles_zk['multi']:>9} "
          f"{singles_zk['write']:>9} {singles_zk['read']:>8}")
    print(f"bulk topics in every broker's Metadata with leaders: {max(seen_s.values()):.2f} s after the request "
          f"({', '.join(f'broker {b}: {s:.2f} s' for b, s in sorted(seen_s.items()))})")
    print(f"per single create: {singles_s / max(singles, 1) * 1000:.1f} ms; "
          f"controller round trips per topic (bulk): {sum(bulk_zk.values()) / max(topics, 1):.2f}")
    if failed:
        print(f"FAILED topics: {[(t.name, int(t.error_code)) for t in failed][:5]} ({len(failed)})")
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--singles", type=int, default=100)
    parser.add_argument("--tree", type=Path, help="run the cluster from this checkout (the code before)")
    parser.add_argument("--profile", metavar="DIR", help="profile every broker (FAUXKA_PROFILE, fauxka/profiling.py) "
                        "from the bulk CreateTopics until every broker's Metadata lists its topics")
    args = parser.parse_args()
    if args.profile:
        os.environ["FAUXKA_PROFILE"] = str(Path(args.profile).resolve())
    with local_cluster(3, tree=args.tree) as cluster:
        asyncio.run(run(args.topics, args.singles, cluster.ports, cluster.metrics,
                        cluster.signal if args.profile else None))


if __name__ == "__main__":
    main()
