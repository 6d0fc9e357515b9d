"""A lean load generator: every request is encoded before the clock starts and every response
decoded and checked after it stops, so the figures are the broker's (and the network's),
not the benchmark client's Python. Each client has one connection and one request in flight.
"""

import asyncio
import dataclasses
import statistics
import time
from typing import Any, Callable

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.codec import decode_response, encode_request, request_schema
from fauxka.broker.protocol.framing import read_frame

_MAX_RESPONSE = 1 << 30


@dataclasses.dataclass
class Load:
    latencies: list[float]  # seconds, one per request
    wall_s: float

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.wall_s

    @property
    def median_ms(self) -> float:
        return statistics.median(self.latencies) * 1000

    @property
    def p99_ms(self) -> float:
        return percentile(self.latencies, 0.99) * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def validate_only_create(index: int, version: int = 7) -> Any:
    """One single-topic validate_only CreateTopics (v7: what Kafka's Java AdminClient sends;
    v4: what librdkafka, so confluent-kafka, sends -- its response carries no configs)."""
    return build(request_schema(19, version), {
        "topics": [{"name": f"bench-{index}", "num_partitions": 1, "replication_factor": 1,
                    "assignments": [], "configs": []}],
        "timeout": 5000, "validate_only": True})


def check_created(response: Any) -> None:
    codes = [int(t.error_code) for t in response.topics]
    if codes != [0]:
        raise AssertionError(f"validate_only CreateTopics failed: {response}")


async def run(port: int, clients: int, requests: int, make: Callable[[int], Any] = validate_only_create,
              check: Callable[[Any], None] = check_created) -> Load:
    """`requests` requests spread over `clients` concurrent connections to 127.0.0.1:`port`."""
    per_client = max(requests // clients, 1)
    connections = [await asyncio.open_connection("127.0.0.1", port) for _ in range(clients)]
    plans = []
    for c in range(clients):
        requests_of_c = [make(c * per_client + i) for i in range(per_client)]
        plans.append([(r, encode_request(r, i + 1, "fauxka-bench")) for i, r in enumerate(requests_of_c)])

    async def one_client(c: int) -> tuple[list[float], list[bytes]]:
        reader, writer = connections[c]
        times, frames = [], []
        for _, frame in plans[c]:
            started = time.perf_counter()
            writer.write(frame)
            response = await read_frame(reader, _MAX_RESPONSE)
            times.append(time.perf_counter() - started)
            frames.append(response)
        return times, frames

    try:
        started = time.perf_counter()
        results = await asyncio.gather(*(one_client(c) for c in range(clients)))
        wall = time.perf_counter() - started
    finally:
        for _, writer in connections:
            writer.close()
    for c, (_, frames) in enumerate(results):
        for (request, _), frame in zip(plans[c], frames):
            if frame is None:
                raise ConnectionError("the broker closed a benchmark connection")
            check(decode_response(frame, type(request))[1])
    return Load([t for times, _ in results for t in times], wall)
