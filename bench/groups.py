"""Consumer groups (issue 12): rebalance time and offset commits per second on one coordinator.

Rebalance time: N-1 members are Stable in a group; the N-th joins at t0; the others learn of it
from a heartbeat sent at once (a real client's heartbeat interval comes on top), rejoin, and every
member has its assignment from SyncGroup at t1. Reported: t1 - t0, the coordinator's own share,
for N = 2, 8, 32 with group.initial.rebalance.delay.ms=0 (what `fauxka up` writes). Commits: C
connections each sending OffsetCommit v8 (simple consumer, one partition) back to back for a few
seconds; every commit is an acks=all append to __consumer_offsets (replication factor 3).

    .venv/bin/python -m bench.groups [--rounds 5] [--seconds 5]
    .venv/bin/python -m bench.groups --commits-only 64 [--seconds 5]   (with CPU per commit)
"""

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import request_schema

from .common import local_cluster, per_unit, requests_by_api

PROTOCOL = b"\x00\x00\x00\x00\x00\x01\x00\x05bench\x00\x00\x00\x00"  # ConsumerProtocolSubscription v0


async def _coordinator(ports: dict[int, int], group: str) -> int:
    conn = await KafkaConnection.open("127.0.0.1", next(iter(ports.values())), 5)
    try:
        for _ in range(300):
            r = await conn.send(build(request_schema(10, 3), {"key": group, "key_type": 0}), 5)
            if int(r.error_code) == 0:
                return r.port
            await asyncio.sleep(0.1)
        raise RuntimeError("no coordinator")
    finally:
        await conn.close()


def _join(group: str, member_id: str):
    return build(request_schema(11, 5), {
        "group_id": group, "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": member_id,
        "group_instance_id": None, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": PROTOCOL}]})


def _sync(group: str, generation: int, member_id: str, assignments):
    return build(request_schema(14, 3), {
        "group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": None,
        "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]})


class Member:
    def __init__(self, conn, group: str):
        self.conn, self.group, self.id, self.generation = conn, group, "", -1

    async def join_and_sync(self) -> None:
        """Join (asking for a member id first), sync; again while a rebalance interrupts."""
        for _ in range(50):
            r = await self.conn.send(_join(self.group, self.id), 60)
            if int(r.error_code) == 79:  # MEMBER_ID_REQUIRED
                self.id = r.member_id
                continue
            if int(r.error_code) in (14, 15, 16):  # the coordinator named before it is ready: as _first_commit
                await asyncio.sleep(0.1)
                continue
            assert int(r.error_code) == 0, r
            self.generation = r.generation_id
            assignments = [(m.member_id, b"x") for m in r.members] if r.leader == self.id else []
            s = await self.conn.send(_sync(self.group, self.generation, self.id, assignments), 60)
            if int(s.error_code) == 27:  # REBALANCE_IN_PROGRESS: rejoin
                continue
            assert int(s.error_code) == 0, s
            return
        raise RuntimeError("no stable generation")

    async def heartbeat(self) -> int:
        r = await self.conn.send(build(request_schema(12, 3), {
            "group_id": self.group, "generation_id": self.generation, "member_id": self.id,
            "group_instance_id": None}), 10)
        return int(r.error_code)


async def rebalance_ms(ports: dict[int, int], n: int, group: str) -> float:
    port = await _coordinator(ports, group)
    members = [Member(await KafkaConnection.open("127.0.0.1", port, 5), group) for _ in range(n)]
    try:
        while True:  # the first N-1 members Stable in one generation
            await asyncio.gather(*(m.join_and_sync() for m in members[:-1]))
            codes = await asyncio.gather(*(m.heartbeat() for m in members[:-1]))
            if set(codes) == {0} and len({m.generation for m in members[:-1]}) == 1:
                break
        t0 = time.perf_counter()
        last = asyncio.create_task(members[-1].join_and_sync())
        await asyncio.sleep(0)
        await asyncio.gather(*(m.heartbeat() for m in members[:-1]))  # REBALANCE_IN_PROGRESS
        await asyncio.gather(last, *(m.join_and_sync() for m in members[:-1]))
        return (time.perf_counter() - t0) * 1000
    finally:
        for m in members:
            await m.conn.close()


def _commit(group: str, partition: int, offset: int):
    return build(request_schema(8, 8), {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": "bench", "partitions": [{"partition_index": partition, "committed_offset": offset,
                                                     "committed_leader_epoch": -1, "committed_metadata": ""}]}]})


async def _first_commit(conn, group: str) -> None:
    """Until the coordinator takes a commit: another broker may name it as the coordinator before
    it has applied its leadership or loaded the partition (a client retries these errors too)."""
    for _ in range(300):
        r = await conn.send(_commit(group, 0, 0), 10)
        code = int(r.topics[0].partitions[0].error_code)
        if code == 0:
            return
        assert code in (14, 15, 16), r  # COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR
        await asyncio.sleep(0.1)
    raise RuntimeError("the coordinator takes no commit")


async def commits_per_s(ports: dict[int, int], connections: int, seconds: float, group: str | None = None) -> float:
    group = group or f"bench-commits-{time.time_ns()}"
    port = await _coordinator(ports, group)
    conns = [await KafkaConnection.open("127.0.0.1", port, 5) for _ in range(connections)]
    await _first_commit(conns[0], group)
    done = 0
    deadline = time.perf_counter() + seconds

    async def loop(conn, i):
        nonlocal done
        offset = 0
        while time.perf_counter() < deadline:
            offset += 1
            r = await conn.send(_commit(group, i, offset), 10)
            assert int(r.topics[0].partitions[0].error_code) == 0, r
            done += 1
    started = time.perf_counter()
    await asyncio.gather(*(loop(c, i) for i, c in enumerate(conns)))
    elapsed = time.perf_counter() - started
    for c in conns:
        await c.close()
    return done / elapsed


async def _topic(ports: dict[int, int], partitions: int) -> None:
    from .common import controller_of
    controller = await controller_of(next(iter(ports.values())))
    conn = await KafkaConnection.open("127.0.0.1", ports[controller], 5)
    try:
        await conn.send(build(request_schema(19, 7), {
            "topics": [{"name": "bench", "num_partitions": partitions, "replication_factor": 3, "assignments": [],
                        "configs": []}], "timeout": 10000, "validate_only": False}), 15)
    finally:
        await conn.close()


async def measure(ports: dict[int, int], rounds: int, seconds: float) -> dict:
    await _topic(ports, 64)
    out = {}
    for n in (2, 8, 32):
        samples = [await rebalance_ms(ports, n, f"bench-rebalance-{n}-{r}-{time.time_ns()}") for r in range(rounds)]
        out[f"rebalance_ms_n{n}"] = statistics.median(samples)
    for c in (1, 16, 64):
        out[f"commits_per_s_c{c}"] = await commits_per_s(ports, c, seconds)
    return out


async def commit_costs(cluster, connections: int, seconds: float) -> dict:
    """Commits/s at `connections`, and the coordinator's and the followers' CPU µs per commit
    (user + system from /proc over the commit loop, the benchmark's start-up excluded)."""
    await _topic(cluster.ports, 64)
    group = f"bench-commits-{time.time_ns()}"
    port = await _coordinator(cluster.ports, group)
    coordinator = next(b for b, p in cluster.ports.items() if p == port)
    conn = await KafkaConnection.open("127.0.0.1", cluster.ports[coordinator], 5)
    await _first_commit(conn, group)
    await conn.close()
    before, started, requests = cluster.cpu_s(), time.perf_counter(), requests_by_api(cluster)
    rate = await commits_per_s(cluster.ports, connections, seconds, group)
    elapsed, after = time.perf_counter() - started, cluster.cpu_s()
    commits = rate * seconds  # commits_per_s's own count, within its loop
    cpu = {b: (after[b] - before[b]) * 1e6 / commits for b in before}
    return {f"commits_per_s_c{connections}": rate, "coordinator_cpu_us": cpu.pop(coordinator),
            "followers_cpu_us": sum(cpu.values()), "loop_s": elapsed,
            **per_unit(requests_by_api(cluster), requests, commits, "requests per commit")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--commits-only", type=int, metavar="C",
                        help="only the commit loop with C connections, with CPU per commit")
    parser.add_argument("--tree", type=Path, help="run the cluster from this checkout (the code before)")
    args = parser.parse_args()
    with local_cluster(3, ("offsets.topic.num.partitions=3",), tree=args.tree) as cluster:
        if args.commits_only:
            figures = asyncio.run(commit_costs(cluster, args.commits_only, args.seconds))
        else:
            figures = asyncio.run(measure(cluster.ports, args.rounds, args.seconds))
    for name, value in figures.items():
        print(f"{name}: {value:.1f}" if value >= 10 else f"{name}: {value:.3f}")


if __name__ == "__main__":
    main()
