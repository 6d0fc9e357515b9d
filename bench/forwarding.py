"""Benchmark: forwarding overhead. Single-topic validate_only CreateTopics sent straight to
the controller vs through a non-controller, with 1 and 64 concurrent clients; median and p99
latency and the forwarded/direct ratios, measured in the same run.

    .venv/bin/python -m bench.forwarding [--requests 400]
"""

import argparse
import asyncio
import statistics
import time

from broker.protocol.build import build
from broker.protocol.client import KafkaConnection
from broker.protocol.codec import request_schema

from .common import controller_of, local_cluster


def validate_only_create(index: int):
    return build(request_schema(19, 7), {
        "topics": [{"name": f"bench-{index}", "num_partitions": 1, "replication_factor": 1,
                    "assignments": [], "configs": []}],
        "timeout": 5000, "validate_only": True})


async def latencies(port: int, clients: int, requests: int) -> list[float]:
    """Each client has its own connection and sends its share of requests one after another."""
    per_client = max(requests // clients, 1)

    async def one_client(c: int) -> list[float]:
        conn = await KafkaConnection.open("127.0.0.1", port, 10)
        out = []
        try:
            for i in range(per_client):
                started = time.perf_counter()
                response = await conn.send(validate_only_create(c * per_client + i), 30)
                out.append(time.perf_counter() - started)
                assert int(response.topics[0].error_code) == 0, response
        finally:
            await conn.close()
        return out

    results = await asyncio.gather(*(one_client(c) for c in range(clients)))
    return [x for r in results for x in r]


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def run(ports: dict[int, int], requests: int) -> None:
    controller = await controller_of(ports[1])
    other = next(b for b in ports if b != controller)
    await latencies(ports[controller], 4, 40)  # warm up both paths
    await latencies(ports[other], 4, 40)
    print(f"{'clients':>7} {'path':<10} {'median ms':>10} {'p99 ms':>8} {'req/s':>8}")
    for clients in (1, 64):
        row = {}
        for path, port in (("direct", ports[controller]), ("forwarded", ports[other])):
            started = time.perf_counter()
            values = await latencies(port, clients, requests)
            rate = len(values) / (time.perf_counter() - started)
            row[path] = (statistics.median(values) * 1000, p(values, 0.99))
            print(f"{clients:>7} {path:<10} {row[path][0]:>10.2f} {row[path][1]:>8.2f} {rate:>8.0f}")
        print(f"{clients:>7} {'ratio':<10} {row['forwarded'][0] / row['direct'][0]:>10.2f} "
              f"{row['forwarded'][1] / row['direct'][1]:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=640)
    args = parser.parse_args()
    with local_cluster(3) as cluster:
        asyncio.run(run(cluster.ports, args.requests))


if __name__ == "__main__":
    main()
