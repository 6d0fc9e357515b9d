"""Benchmark: forwarding overhead. Single-topic validate_only CreateTopics sent straight to
the controller vs through a non-controller, with 1 and 64 concurrent clients; median and p99
latency and the forwarded/direct ratios, each round measuring both paths back to back.

    .venv/bin/python -m bench.forwarding [--rounds 3]
"""

import argparse
import asyncio
import statistics

from . import load
from .common import LocalCluster, controller_of, local_cluster

REQUESTS = {1: 640, 64: 2560}  # per round and path


async def compare(cluster: LocalCluster, clients: int, rounds: int, version: int = 7) -> dict:
    """Medians over `rounds` of: direct and forwarded median/p99 (ms), their ratios, req/s, and
    the CPU milliseconds per request the controller and the forwarding broker spent."""
    ports = cluster.ports
    controller = await controller_of(ports[1])
    other = next(b for b in ports if b != controller)
    make = lambda i: load.validate_only_create(i, version)  # noqa: E731
    rows = []
    for _ in range(rounds):
        cpu = cluster.cpu_s()
        direct = await load.run(ports[controller], clients, REQUESTS[clients], make)
        cpu_direct = cluster.cpu_s()
        forwarded = await load.run(ports[other], clients, REQUESTS[clients], make)
        cpu_forwarded = cluster.cpu_s()
        per_request = lambda after, before, b, n: (after[b] - before[b]) * 1000 / n  # noqa: E731
        rows.append({"direct_median": direct.median_ms, "direct_p99": direct.p99_ms,
                     "forwarded_median": forwarded.median_ms, "forwarded_p99": forwarded.p99_ms,
                     "ratio_median": forwarded.median_ms / direct.median_ms,
                     "ratio_p99": forwarded.p99_ms / direct.p99_ms,
                     "direct_rate": direct.rate, "forwarded_rate": forwarded.rate,
                     "controller_cpu_ms": per_request(cpu_direct, cpu, controller, len(direct.latencies)),
                     "forwarder_cpu_ms": per_request(cpu_forwarded, cpu_direct, other, len(forwarded.latencies))})
    return {key: statistics.median(row[key] for row in rows) for key in rows[0]}


async def warm_up(ports: dict[int, int]) -> None:
    for port in ports.values():
        await load.run(port, 4, 200)


async def run(cluster: LocalCluster, rounds: int) -> None:
    await warm_up(cluster.ports)
    print(f"{'clients':>7} {'direct ms (p50/p99)':>20} {'forwarded ms':>16} {'ratio':>12} {'req/s d/f':>12}")
    for clients in (1, 64):
        f = await compare(cluster, clients, rounds)
        print(f"{clients:>7} {f['direct_median']:>9.2f}/{f['direct_p99']:<10.2f} "
              f"{f['forwarded_median']:>7.2f}/{f['forwarded_p99']:<8.2f} "
              f"{f['ratio_median']:>5.2f}/{f['ratio_p99']:<6.2f} {f['direct_rate']:>5.0f}/{f['forwarded_rate']:<5.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with local_cluster(3) as cluster:
        asyncio.run(run(cluster, args.rounds))


if __name__ == "__main__":
    main()
