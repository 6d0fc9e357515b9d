"""How fast every broker learns a leadership change written by the controller (issue 11: within
100 ms on a quiet cluster).

A 3-broker cluster; the bench plays a partition leader and sends AlterPartition (ISR shrink,
then expand, alternately) to the controller, then polls Metadata on every other broker over
kept connections until its ISR shows the change. The controller's ZooKeeper write happens
between sending the request (t0) and its answer (t1); a broker that shows it at t2 learned it
at most t2 - t0 and at least t2 - t1 after the write.

    .venv/bin/python -m bench.leader_propagation [--rounds 30]
"""

import argparse
import asyncio
import statistics
import time

from broker.protocol.build import build
from broker.protocol.client import KafkaConnection
from broker.protocol.codec import request_schema

from .common import controller_of, local_cluster

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with local_cluster(3) as cluster:
        samples = asyncio.run(measure(cluster.ports, args.rounds))
    for broker, values in samples.items():
        lower = sorted(v[0] for v in values)
        upper = sorted(v[1] for v in values)
        print(f"broker {broker}: learned the write {statistics.median(lower):.1f}-{statistics.median(upper):.1f} ms "
              f"after it (median), max {max(upper):.1f} ms, over {len(values)} changes")


if __name__ == "__main__":
    main()
