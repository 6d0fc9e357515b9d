"""Keyed records on the wrong partition right after create_topics() (issue 29's first row): N new
topics (3 partitions), each created through one broker and produced to at once with 30 keys by a
fresh producer whose only bootstrap is one broker, round robin. librdkafka's "consistent"
partitioner puts a key on CRC32(key) % partition count: a record elsewhere was hashed over a
partition count the broker told wrong (a topic shown with some of its partitions).

    .venv/bin/python -m bench.misplaced [--topics 100] [--replication 1] [--tree TREE]
"""

import argparse
import zlib
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from .common import local_cluster

KEYS = [f"key-{i}".encode() for i in range(30)]
PARTITIONS = 3


def misplaced(addresses: list[str], topics: int, replication: int, prefix: str) -> tuple[int, int]:
    """(topics with a misplaced record, misplaced records)."""
    admins = [AdminClient({"bootstrap.servers": a}) for a in addresses]
    wrong_topics = wrong_records = 0
    for i in range(topics):
        topic = f"{prefix}-{i}"
        admins[i % len(admins)].create_topics([NewTopic(topic, PARTITIONS, replication)])[topic].result(30)
        placed: list[tuple[bytes, int]] = []
        producer = Producer({"bootstrap.servers": addresses[(i + 1) % len(addresses)], "acks": "all",
                             "partitioner": "consistent", "linger.ms": 0})
        for key in KEYS:
            producer.produce(topic, key=key, value=b"v",
                             on_delivery=lambda err, msg: placed.append((msg.key(), msg.partition())) if err is None else None)
        if producer.flush(30) or len(placed) != len(KEYS):
            raise RuntimeError(f"produce to {topic}: {len(placed)} of {len(KEYS)} acknowledged")
        bad = sum(1 for key, p in placed if p != zlib.crc32(key) % PARTITIONS)
        wrong_topics += bad > 0
        wrong_records += bad
    return wrong_topics, wrong_records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--replication", type=int, default=1)
    parser.add_argument("--tree", type=Path, help="run the cluster from this checkout (the code before)")
    args = parser.parse_args()
    with local_cluster(3, tree=args.tree) as cluster:
        addresses = [f"127.0.0.1:{port}" for port in cluster.ports.values()]
        topics, records = misplaced(addresses, args.topics, args.replication, "misplaced")
    print(f"topics with misplaced keyed records: {topics} of {args.topics}; records: {records} of "
          f"{args.topics * len(KEYS)} (RF{args.replication})")


if __name__ == "__main__":
    main()
