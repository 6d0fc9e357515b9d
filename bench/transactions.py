"""Transactions (issue 13): transactions per second from one confluent-kafka transactional
producer, each 10 records over 3 partitions (replication factor 3, acks=all), and the cost of
commit_transaction in milliseconds (EndTxn's PrepareCommit replicated in __transaction_state;
the markers follow asynchronously, as in Kafka), and the brokers' CPU time per transaction (all
three processes, user + system: steadier than the rates on a shared machine), with the requests
the brokers answered per transaction by api (their /metrics: the producer's and the followers').

    .venv/bin/python -m bench.transactions [--seconds 10] [--tree TREE] [--profile DIR]
"""

import argparse
import os
import signal
import statistics
import time
from pathlib import Path

from .common import local_cluster, per_unit, requests_by_api

RECORDS, PARTITIONS = 10, 3
OVERRIDES = ("transaction.state.log.num.partitions=3", "offsets.topic.num.partitions=3")


def measure(bootstrap: str, seconds: float, cluster=None, profile: bool = False) -> dict[str, float]:
    """`cluster` (bench.common.LocalCluster): also the brokers' CPU ms per transaction; with
    `profile`, every broker is signalled around the timed loop (FAUXKA_PROFILE's window)."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("bench-txn", PARTITIONS, 3)])["bench-txn"].result(30)
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "bench-txn", "linger.ms": 0})
    p.init_transactions(60)
    for _ in range(20):  # warm up: metadata, coordinator, connections
        _one(p)
    commits, done = [], 0
    if profile:
        cluster.signal(signal.SIGUSR1)
        time.sleep(0.2)
    cpu = cluster.cpu_s() if cluster is not None else {}
    requests = requests_by_api(cluster) if cluster is not None else {}
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        commits.append(_one(p))
        done += 1
    elapsed = time.monotonic() - start
    if profile:
        cluster.signal(signal.SIGUSR2)
    commits.sort()
    out = {"transactions/s": done / elapsed, "commit ms median": statistics.median(commits),
           "commit ms p99": commits[int(len(commits) * 0.99) - 1]}
    if cluster is not None:
        after = cluster.cpu_s()
        out["broker cpu ms per transaction"] = sum(after[b] - cpu[b] for b in cpu) * 1000 / done
        out.update(per_unit(requests_by_api(cluster), requests, done, "requests per transaction"))
    return out


def _one(p) -> float:
    p.begin_transaction()
    for i in range(RECORDS):
        p.produce("bench-txn", b"x" * 100, partition=i % PARTITIONS)
    t = time.monotonic()
    p.commit_transaction(30)
    return (time.monotonic() - t) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--tree", type=Path, help="run the cluster from this checkout (the code before)")
    parser.add_argument("--profile", metavar="DIR", help="profile every broker (FAUXKA_PROFILE, fauxka/profiling.py) "
                        "over the timed loop; its figures then carry cProfile's cost")
    args = parser.parse_args()
    if args.profile:
        os.environ["FAUXKA_PROFILE"] = str(Path(args.profile).resolve())
    with local_cluster(3, OVERRIDES, tree=args.tree) as cluster:
        bootstrap = ",".join(f"127.0.0.1:{port}" for port in cluster.ports.values())
        for name, value in measure(bootstrap, args.seconds, cluster, bool(args.profile)).items():
            print(f"{name}: {value:.2f}")


if __name__ == "__main__":
    main()
