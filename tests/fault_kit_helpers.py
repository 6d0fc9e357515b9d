"""Helpers of the fault kit's tests (test_fault_kit*.py)."""

# a follower that stops fetching leaves the ISR in 1.5 s, and comes back fast
LAGGY = {"replica.lag.time.max.ms": "1500", "replica.fetch.backoff.ms": "100"}


def _topic(cluster, partitions: int = 2, replication: int = 1, assignment: list[list[int]] | None = None) -> str:
    """A new topic (confluent-kafka's AdminClient) once every partition has a full ISR."""
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = cluster.unique_topic()
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    if assignment:
        partitions, replication = len(assignment), len(assignment[0])
        spec = NewTopic(topic, partitions, replica_assignment=assignment)
    else:
        spec = NewTopic(topic, partitions, replication)
    admin.create_topics([spec])[topic].result(30)
    cluster.wait_for(lambda: all(len(cluster.isr(topic, p)) == replication for p in range(partitions)), 20,
                     what="full ISRs")
    return topic


def _produce(cluster, topic: str, partition: int, timeout_s: float = 20, producer=None):
    from confluent_kafka import Producer

    producer = producer or Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "retry.backoff.ms": 50})
    results = []
    producer.produce(topic, b"v", partition=partition, on_delivery=lambda err, msg: results.append(err))
    producer.flush(timeout_s)
    return results


def log_size(admin, broker_id: int, topic: str) -> int:
    """The topic's partition 0 log size on one broker, as its DescribeLogDirs says (kafka-python's
    admin): whether a follower has the records."""
    (described,) = admin.describe_log_dirs({topic: [0]}, brokers=[broker_id])
    return sum(p["partition_size"] for d in described["log_dirs"] for t in d["topics"] if t["name"] == topic
               for p in t["partitions"])
