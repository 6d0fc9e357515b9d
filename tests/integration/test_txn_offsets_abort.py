"""An aborted transaction's offsets (send_offsets_to_transaction) are never committed: not after
the client's abort, not after the coordinator's abort on transaction.timeout.ms with the group's
coordinator moved meanwhile, not by a TxnOffsetCommit of the fenced epoch arriving after that abort
(the likely path of the chaos checker's seed 103: a retry landed after the ABORT marker, and the
re-initialised producer's next COMMIT committed it). A consumer of the group sees the old
committed offsets; the next committed transaction of the id commits only its own."""

import pytest

from fauxka.testing import wait_for
from tests.admin_helpers import send, unique

pytestmark = pytest.mark.disruptive

PARTITIONS = 3
OVERRIDES = {"transaction.state.log.num.partitions": "3", "offsets.topic.num.partitions": "3",
             "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000"}


def _producer(cluster, tid: str, **extra):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": tid, "acks": "all", **extra})
    p.init_transactions(60)
    return p


def _transaction(producer, sink: str, offsets: dict[int, int], source: str, consumer, commit: bool = True):
    from confluent_kafka import TopicPartition
    producer.begin_transaction()
    producer.produce(sink, b"out", partition=0)
    assert producer.flush(30) == 0  # nothing outstanding when a broker is killed after
    producer.send_offsets_to_transaction([TopicPartition(source, p, o) for p, o in offsets.items()],
                                         consumer.consumer_group_metadata(), 30)
    if commit is True:
        producer.commit_transaction(30)
    elif commit is False:
        producer.abort_transaction(30)


def _committed(consumer, source: str) -> list[int]:
    """The group's committed offsets; asked again while the client's coordinator is the one the
    partition moved away from (OffsetFetch answers NOT_COORDINATOR there, as Kafka's does)."""
    from confluent_kafka import TopicPartition
    return wait_for(lambda: [tp.offset for tp in consumer.committed(
        [TopicPartition(source, i) for i in range(PARTITIONS)], timeout=10)], 60, 0.5, "the committed offsets")


def _setup(cluster):
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic
    source, sink, group = unique("src"), unique("sink"), unique("g")
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    for future in admin.create_topics([NewTopic(t, PARTITIONS, 3) for t in (source, sink)]).values():
        future.result(60)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False})
    return source, sink, group, consumer


def test_client_abort_keeps_the_old_offsets_and_the_next_commit_commits_its_own(fauxka_cluster_factory):
    cluster = fauxka_cluster_factory(3, OVERRIDES)
    source, sink, group, consumer = _setup(cluster)
    p = _producer(cluster, unique("tid"))
    _transaction(p, sink, dict.fromkeys(range(PARTITIONS), 1), source, consumer)
    assert _committed(consumer, source) == [1] * PARTITIONS
    _transaction(p, sink, dict.fromkeys(range(PARTITIONS), 3), source, consumer, commit=False)
    assert _committed(consumer, source) == [1] * PARTITIONS
    _transaction(p, sink, {0: 5}, source, consumer)
    assert _committed(consumer, source) == [5, 1, 1]
    consumer.close()


def test_coordinator_timeout_abort_across_a_group_coordinator_move_and_a_late_fenced_commit(fauxka_cluster_factory):
    from confluent_kafka import KafkaException
    cluster = fauxka_cluster_factory(3, OVERRIDES)
    source, sink, group, consumer = _setup(cluster)
    tid = unique("tid")
    p = _producer(cluster, tid, **{"transaction.timeout.ms": 5000, "message.timeout.ms": 5000})
    _transaction(p, sink, dict.fromkeys(range(PARTITIONS), 1), source, consumer)
    _transaction(p, sink, dict.fromkeys(range(PARTITIONS), 3), source, consumer, commit=None)  # left open
    old = cluster.coordinator(group)
    cluster.move_coordinator(group, next(b for b in cluster.broker_ids if b != old))
    txn_address = cluster.address(cluster.transaction_coordinator(tid))

    def described():
        r = send(txn_address, 65, 0, {"transactional_ids": [tid]}).transaction_states[0]
        return (int(r.producer_id), int(r.producer_epoch)) if r.transaction_state == "CompleteAbort" else None
    pid, epoch = cluster.wait_for(described, 60, "the coordinator's abort of the timed-out transaction")
    with pytest.raises(KafkaException):
        p.commit_transaction(30)  # fenced: the coordinator bumped the epoch when it aborted
    late = send(cluster.address(cluster.coordinator(group)), 28, 3, {
        "transactional_id": tid, "group_id": group, "producer_id": pid, "producer_epoch": epoch - 1,
        "generation_id": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": source, "partitions": [
            {"partition_index": i, "committed_offset": 9, "committed_leader_epoch": -1, "committed_metadata": ""}
            for i in range(PARTITIONS)]}]})  # the fenced producer's TxnOffsetCommit, retried late
    assert all(int(part.error_code) != 0 for t in late.topics for part in t.partitions)
    assert _committed(consumer, source) == [1] * PARTITIONS
    again = _producer(cluster, tid)  # the same producer id at the next epoch
    _transaction(again, sink, {0: 5}, source, consumer)
    assert _committed(consumer, source) == [5, 1, 1]
    consumer.close()

