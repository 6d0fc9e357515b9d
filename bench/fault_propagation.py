"""How soon every broker obeys a fault (issue 14: "every broker obeys them within 100 ms of the
declaration"): a 3-broker fauxka.testing Cluster; each round adds an error fault on ListOffsets
and polls every partition leader with ListOffsets until all of them answer the fault's error,
then removes it and polls until all answer normally again. Times are from the fault's znode
write (FaultClient.add / remove, without the Cluster's own wait for the brokers' FAULTS_SEEN),
so they include the polling requests' round trips.

    .venv/bin/python -m bench.fault_propagation [--rounds 30]
"""

import argparse
import asyncio
import statistics
import time

from confluent_kafka.admin import AdminClient, NewTopic

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import request_once
from fauxka.broker.protocol.codec import request_schema
from fauxka.faults import make_fault
from fauxka.testing import Cluster


def _latest_offset_error(address: str, topic: str, partition: int) -> int:
    """ListOffsets v9 (latest) to one broker, as a client asks a leader: its error code."""
    host, _, port = address.rpartition(":")
    request = build(request_schema(2, 9), {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": partition, "current_leader_epoch": -1, "timestamp": -1}]}]})
    response = asyncio.run(request_once(host, int(port), request, 5.0))
    return int(response.topics[0].partitions[0].error_code)


def _poll(leaders: dict[str, int], topic: str, code: int, deadline_s: float = 5.0) -> float:
    start = time.monotonic()
    pending = dict(leaders)
    while pending:
        if time.monotonic() - start > deadline_s:
            raise TimeoutError(f"brokers {sorted(pending)} did not answer {code} within {deadline_s}s")
        pending = {a: p for a, p in pending.items() if _latest_offset_error(a, topic, p) != code}
    return time.monotonic() - start


def measure(rounds: int) -> dict[str, list[float]]:
    with Cluster(3) as cluster:
        topic = cluster.unique_topic("prop")
        assert cluster.faults is not None  # the client's ZooKeeper session, opened before timing
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.create_topics([NewTopic(topic, 3, 3)])[topic].result(30)
        cluster.wait_for(lambda: all(cluster.leader(topic, p) >= 0 for p in range(3)), 20, what="leaders")
        leaders = {cluster.address(cluster.leader(topic, p)): p for p in range(3)}
        cluster.wait_for(lambda: all(_latest_offset_error(a, topic, p) == 0 for a, p in leaders.items()),
                         20, what="every leader serving")
        added, removed = [], []
        for _ in range(rounds):
            start = time.monotonic()
            fault = cluster.faults.add(_error_fault(topic))
            added.append(time.monotonic() - start + _poll(leaders, topic, 6))
            start = time.monotonic()
            cluster.faults.remove(fault.id)
            removed.append(time.monotonic() - start + _poll(leaders, topic, 0))
        return {"added": added, "removed": removed}


def _error_fault(topic: str):
    return make_fault("error", api="list_offsets", topic=topic, error="NOT_LEADER_OR_FOLLOWER")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    for what, times in measure(args.rounds).items():
        ms = sorted(t * 1000 for t in times)
        print(f"fault {what}: every broker obeys in median {statistics.median(ms):.1f} ms, "
              f"p90 {ms[int(len(ms) * 0.9) - 1]:.1f} ms, max {ms[-1]:.1f} ms over {len(ms)} rounds")


if __name__ == "__main__":
    main()
