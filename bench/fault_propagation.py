"""How soon every broker obeys a fault (issue 14: "every broker obeys them within 100 ms of the
declaration"): a 3-broker fauxka.testing Cluster; each round adds an error fault on ListOffsets
and polls every partition leader with ListOffsets until all of them answer the fault's error,
then removes it and polls until all answer normally again. Times are from the fault's znode
write (FaultClient.add / remove, without the Cluster's own wait for the brokers' FAULTS_SEEN),
so they include the polling requests' round trips.

    .venv/bin/python -m bench.fault_propagation [--rounds 30]
"""

import argparse
import statistics
import time

from fauxka.faults import make_fault
from fauxka.testing import Cluster
from tests.admin_helpers import create_topics, topic_spec
from tests.data_helpers import list_offset


def _poll(leaders: dict[str, int], topic: str, code: int, deadline_s: float = 5.0) -> float:
    start = time.monotonic()
    pending = dict(leaders)
    while pending:
        if time.monotonic() - start > deadline_s:
            raise TimeoutError(f"brokers {sorted(pending)} did not answer {code} within {deadline_s}s")
        pending = {a: p for a, p in pending.items() if list_offset(a, topic, p, -1).error_code != code}
    return time.monotonic() - start


def measure(rounds: int) -> dict[str, list[float]]:
    with Cluster(3) as cluster:
        topic = cluster.unique_topic("prop")
        assert cluster.faults is not None  # the client's ZooKeeper session, opened before timing
        create_topics(cluster.address(cluster.controller()), [topic_spec(topic, partitions=3, replication_factor=3)])
        cluster.wait_for(lambda: all(cluster.leader(topic, p) >= 0 for p in range(3)), 20, what="leaders")
        leaders = {cluster.address(cluster.leader(topic, p)): p for p in range(3)}
        cluster.wait_for(lambda: all(list_offset(a, topic, p, -1).error_code == 0 for a, p in leaders.items()),
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
