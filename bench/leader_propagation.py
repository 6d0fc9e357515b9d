"""How fast every broker learns a leadership change written by the controller (issue 11: within
100 ms on a quiet cluster).

A 3-broker cluster; the bench plays a partition leader and sends AlterPartition (ISR shrink,
then expand, alternately) to the controller, then polls Metadata on every other broker over
kept connections until its ISR shows the change. The controller's ZooKeeper write happens
between sending the request (t0) and its answer (t1); a broker that shows it at t2 learned it
at most t2 - t0 and at least t2 - t1 after the write.

    .venv/bin/python -m bench.leader_propagation [--rounds 30] [--mass 3000] [--move N] [--tree TREE]

--profile DIR (with --move) writes a cProfile of every broker from the ControlledShutdown until
every broker shows every move (read with `python -m pstats`); the figures of a profiled run carry
cProfile's cost.

--tree TREE runs the cluster from another checkout (bench/common.py local_cluster): the code before,
run alternately with this code for a paired figure.

--mass N also changes the ISR of N partitions in one AlterPartition (as a broker loss changes
every partition it held) and reports when the other brokers show all of them.

--move N (issue 25's row "a leader moved by the controller, until every broker's Metadata names
it"): a topic of N partitions x RF3; the bench sends the controller ControlledShutdown for one
broker (not the controller), which moves that broker's leaderships (about N/3) to the others,
and polls every broker's Metadata until each moved partition names its new leader there. It
prints, over the moved partitions, when the last broker showed each one (p50, p99, max) after
the controller's answer.
"""

import argparse
import asyncio
import os
import signal
import statistics
import time
from pathlib import Path

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import request_schema

from .common import controller_of, leader_partitions, local_cluster

TOPIC = "propagation"


def _metadata():
    return build(request_schema(3, 12), {"topics": [{"name": TOPIC, "topic_id": None}],
                                         "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})


async def _partition(conn):
    md = await conn.send(_metadata(), 5)
    (t,) = md.topics
    return t.topic_id, t.partitions[0] if t.partitions else None


async def measure(ports: dict[int, int], rounds: int) -> dict[int, list[tuple[float, float]]]:
    controller = await controller_of(next(iter(ports.values())))
    conns = {b: await KafkaConnection.open("127.0.0.1", port, 5) for b, port in ports.items()}
    try:
        await conns[controller].send(build(request_schema(19, 7), {
            "topics": [{"name": TOPIC, "num_partitions": 1, "replication_factor": 3, "assignments": [],
                        "configs": []}], "timeout": 10000, "validate_only": False}), 15)
        others = [b for b in conns if b != controller]
        for b in others:  # every broker knows the topic
            while (await _partition(conns[b]))[1] is None:
                await asyncio.sleep(0.01)
        topic_id, p = await _partition(conns[controller])
        leader, epoch, full = p.leader_id, p.leader_epoch, sorted(p.isr_nodes)
        partition_epoch = 0
        samples: dict[int, list[tuple[float, float]]] = {b: [] for b in others}
        for i in range(rounds + 1):
            isr = [leader] if i % 2 == 0 else full
            request = build(request_schema(56, 3), {"broker_id": leader, "broker_epoch": -1, "topics": [{
                "topic_id": topic_id, "partitions": [{
                    "partition_index": 0, "leader_epoch": epoch, "partition_epoch": partition_epoch,
                    "new_isr_with_epochs": [{"broker_id": r, "broker_epoch": -1} for r in isr],
                    "leader_recovery_state": 0}]}]})
            await asyncio.sleep(0.2)  # a quiet cluster between changes
            t0 = time.perf_counter()
            response = await conns[controller].send(request, 5)
            t1 = time.perf_counter()
            (answer,) = response.topics[0].partitions
            if int(answer.error_code) != 0:
                raise RuntimeError(f"AlterPartition failed: {answer}")
            partition_epoch = answer.partition_epoch

            async def seen(b):
                while sorted((await _partition(conns[b]))[1].isr_nodes) != sorted(isr):
                    pass
                return time.perf_counter()

            t2s = await asyncio.wait_for(asyncio.gather(*(seen(b) for b in others)), 5)
            if i > 0:  # the first round warms connections and caches
                for b, t2 in zip(others, t2s):
                    samples[b].append(((t2 - t1) * 1000, (t2 - t0) * 1000))
        return samples
    finally:
        for conn in conns.values():
            await conn.close()


async def _big_topic(ports: dict[int, int], topic: str, count: int):
    """(controller, a connection to every broker, Metadata for `topic`) once `topic`, `count`
    partitions x RF3, is created."""
    controller = await controller_of(next(iter(ports.values())))
    conns = {b: await KafkaConnection.open("127.0.0.1", port, 30) for b, port in ports.items()}
    request = build(request_schema(3, 12), {"topics": [{"name": topic, "topic_id": None}],
                                            "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False})
    await conns[controller].send(build(request_schema(19, 7), {
        "topics": [{"name": topic, "num_partitions": count, "replication_factor": 3, "assignments": [],
                    "configs": []}], "timeout": 60000, "validate_only": False}), 90)
    return controller, conns, request


async def mass_change(ports: dict[int, int], count: int) -> dict[int, float]:
    """One AlterPartition shrinking the ISR of `count` partitions: seconds from its answer until
    each other broker's Metadata shows every one of them."""
    controller, conns, request = await _big_topic(ports, f"{TOPIC}-mass", count)
    try:
        others = [b for b in conns if b != controller]
        for b in others:
            while len((await conns[b].send(request, 300)).topics[0].partitions) < count:
                await asyncio.sleep(0.1)
        (t,) = (await conns[controller].send(request, 300)).topics
        by_leader: dict[int, list] = {}
        for p in t.partitions:
            by_leader.setdefault(p.leader_id, []).append(p)
        started = time.perf_counter()
        for leader, parts in by_leader.items():  # each leader sends its own AlterPartition
            response = await conns[controller].send(build(request_schema(56, 3), {
                "broker_id": leader, "broker_epoch": -1, "topics": [{"topic_id": t.topic_id, "partitions": [{
                    "partition_index": p.partition_index, "leader_epoch": p.leader_epoch, "partition_epoch": 0,
                    "new_isr_with_epochs": [{"broker_id": leader, "broker_epoch": -1}],
                    "leader_recovery_state": 0} for p in parts]}]}), 60)
            assert all(int(r.error_code) == 0 for r in response.topics[0].partitions), "AlterPartition failed"
        written = time.perf_counter()
        print(f"controller wrote {count} ISR changes in {written - started:.2f}s")
        seen = {}
        for b in others:
            while not all(len(p.isr_nodes) == 1 for p in (await conns[b].send(request, 300)).topics[0].partitions):
                await asyncio.sleep(0.05)
            seen[b] = time.perf_counter() - written
        return seen
    finally:
        for conn in conns.values():
            await conn.close()


async def move_leaders(ports: dict[int, int], count: int, profile=None,
                      metrics: dict[int, int] | None = None) -> list[float]:
    """Seconds from the ControlledShutdown answer until every broker's Metadata names each moved
    partition's new leader, one figure per moved partition. `profile(signal)`, when given,
    signals the brokers (SIGUSR1 before the ControlledShutdown, SIGUSR2 once every broker shows
    every move: bench.latency's profile window). With `metrics` (the brokers' /metrics ports) the
    move waits until the brokers lead all `count` partitions, not only name them: a broker makes a
    bulk of new replicas in the background, after its Metadata lists them."""
    controller, conns, request = await _big_topic(ports, f"{TOPIC}-move", count)
    try:
        for b in conns:
            while sum(p.leader_id >= 0 for p in (await conns[b].send(request, 300)).topics[0].partitions) < count:
                await asyncio.sleep(0.1)
        while metrics and sum(leader_partitions(port) for port in metrics.values()) < count:
            await asyncio.sleep(0.2)
        (t,) = (await conns[controller].send(request, 300)).topics
        victim = next(b for b in conns if b != controller)
        moved = {p.partition_index for p in t.partitions if p.leader_id == victim}
        await asyncio.sleep(1.0)  # a quiet cluster
        if profile:
            profile(signal.SIGUSR1)
            await asyncio.sleep(0.2)
        response = await conns[controller].send(build(request_schema(7, 3), {"broker_id": victim,
                                                                             "broker_epoch": -1}), 60)
        answered = time.perf_counter()
        if int(response.error_code) != 0:
            raise RuntimeError(f"ControlledShutdown failed: {response}")
        seen: dict[int, dict[int, float]] = {b: {} for b in conns}

        async def poll(b):
            while len(seen[b]) < len(moved):
                md = await conns[b].send(request, 300)
                now = time.perf_counter()
                for p in md.topics[0].partitions:
                    if p.partition_index in moved and p.leader_id != victim and p.partition_index not in seen[b]:
                        seen[b][p.partition_index] = now - answered
                await asyncio.sleep(0.01)

        await asyncio.wait_for(asyncio.gather(*(poll(b) for b in conns)), 600)
        if profile:
            profile(signal.SIGUSR2)
            await asyncio.sleep(1.0)
        print(f"controller {controller}, shut down {victim}; every move in a broker's Metadata: "
              + ", ".join(f"broker {b} {max(seen[b].values()) * 1000:.0f} ms" for b in sorted(conns)))
        return sorted(max(seen[b][p] for b in conns) for p in moved)
    finally:
        for conn in conns.values():
            await conn.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--mass", type=int, default=0)
    parser.add_argument("--move", type=int, default=0)
    parser.add_argument("--tree", type=Path, help="run the cluster from this checkout (the code before)")
    parser.add_argument("--profile", metavar="DIR", help="with --move: profile every broker (FAUXKA_PROFILE, "
                        "fauxka/profiling.py) from the ControlledShutdown until every move is seen")
    args = parser.parse_args()
    if args.profile:
        os.environ["FAUXKA_PROFILE"] = str(Path(args.profile).resolve())
    if args.move:
        with local_cluster(3, tree=args.tree) as cluster:
            times = asyncio.run(move_leaders(cluster.ports, args.move, cluster.signal if args.profile else None,
                                             cluster.metrics))
        p = lambda q: times[min(len(times) - 1, int(q * len(times)))] * 1000  # noqa: E731
        print(f"{len(times)} leaderships moved (of {args.move} partitions): in every broker's Metadata "
              f"p50 {p(0.5):.0f} ms, p99 {p(0.99):.0f} ms, max {times[-1] * 1000:.0f} ms after the answer")
        return
    with local_cluster(3, tree=args.tree) as cluster:
        samples = asyncio.run(measure(cluster.ports, args.rounds))
        if args.mass:
            for broker, seconds in asyncio.run(mass_change(cluster.ports, args.mass)).items():
                print(f"broker {broker}: showed all {args.mass} changes {seconds * 1000:.0f} ms after the last write")
    for broker, values in samples.items():
        lower = sorted(v[0] for v in values)
        upper = sorted(v[1] for v in values)
        print(f"broker {broker}: learned the write {statistics.median(lower):.1f}-{statistics.median(upper):.1f} ms "
              f"after it (median), max {max(upper):.1f} ms, over {len(values)} changes")


if __name__ == "__main__":
    main()
