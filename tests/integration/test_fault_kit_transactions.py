"""The fault kit moves a transaction's coordinator (fauxka.testing.Cluster.move_transaction_coordinator):
the leadership of the transactional id's __transaction_state partition moves to another in-sync
replica, which loads the transaction; the producer, mid-transaction, is sent on to it and commits.
With the previous transaction's markers hung (a `hang` fault on WriteTxnMarkers): a move answers
the waiting AddPartitionsToTxn NOT_COORDINATOR, and an abort at once gets Kafka's INVALID_TXN_STATE."""

import pytest

from tests.fault_kit_helpers import _topic


def _read_committed(cluster, topic: str, expect: int, timeout_s: float = 30) -> list[bytes]:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": cluster.unique_topic("g"),
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})
    consumer.subscribe([topic])
    got: list[bytes] = []
    try:
        def enough():
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
            return len(got) >= expect
        cluster.wait_for(enough, timeout_s, what=f"{expect} committed records")
    finally:
        consumer.close()
    return got


def _producer_and_coordinators(cluster, tid: str):
    """A transactional producer (client.id = tid), initialised; its coordinator and another
    in-sync replica of the id's __transaction_state partition to move the coordinator to."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": tid, "acks": "all",
                         "client.id": tid})
    producer.init_transactions(30)
    partition = cluster._txn_partition(tid)
    cluster.wait_for(lambda: len(cluster.isr("__transaction_state", partition)) > 1, 20,
                     what="a second in-sync replica of the transaction's partition")
    first = cluster.transaction_coordinator(tid)
    target = next(b for b in cluster.isr("__transaction_state", partition) if b != first)
    return producer, first, target


def test_transaction_coordinator_moves_mid_transaction_and_the_producer_commits(fauxka_cluster):
    cluster = fauxka_cluster
    topic, tid = _topic(cluster, 1), cluster.unique_topic("tid")
    producer, first, target = _producer_and_coordinators(cluster, tid)

    with cluster.tracing():
        producer.begin_transaction()
        producer.produce(topic, b"a", partition=0)
        assert producer.flush(20) == 0  # AddPartitionsToTxn went to the first coordinator
        cluster.move_transaction_coordinator(tid, target)
        assert cluster.transaction_coordinator(tid) == target
        producer.commit_transaction(30)  # EndTxn: NOT_COORDINATOR from the old one, then the new one
    end_txns = cluster.trace(api="end_txn", client_id=tid)
    assert [e["broker"] for e in end_txns if e["errors"] == [0]] == [target]
    assert all(e["errors"] == [16] for e in end_txns if e["broker"] != target)  # NOT_COORDINATOR, if asked
    adds = cluster.trace(api="add_partitions_to_txn", client_id=tid)
    assert adds and adds[0]["broker"] == first and adds[0]["errors"] == [0]

    # moved back: the first broker loads the completed transaction and serves the next one
    cluster.move_transaction_coordinator(tid, first)
    producer.begin_transaction()
    producer.produce(topic, b"b", partition=0)
    producer.commit_transaction(30)
    assert sorted(_read_committed(cluster, topic, 2)) == [b"a", b"b"]


def test_a_coordinator_move_while_the_next_transaction_waits_for_markers_answers_not_coordinator(fauxka_cluster):
    """The previous transaction's markers hang (WriteTxnMarkers to the partition's leader gets no
    answer), so each AddPartitionsToTxn of the next transaction waits for them and is answered
    CONCURRENT_TRANSACTIONS; the coordinator then moves. A request that was waiting when the old
    coordinator unloaded the id must be told NOT_COORDINATOR (Kafka's getTransactionState), not
    INVALID_PRODUCER_ID_MAPPING: librdkafka takes that for a lost producer id, bumps the epoch and
    fails the transaction (a chaos run's restarted coordinator: the workload's abort then failed
    fatally, INVALID_TXN_STATE). The producer goes on to the new coordinator and commits."""
    cluster = fauxka_cluster
    tid = cluster.unique_topic("tid")
    producer, first, target = _producer_and_coordinators(cluster, tid)
    leader = next(b for b in cluster.broker_ids if b != first)  # markers reach it by WriteTxnMarkers
    topic = _topic(cluster, assignment=[[leader]])

    def concurrent_answers():
        return [e for e in cluster.trace(api="add_partitions_to_txn", client_id=tid) if e["errors"] == [51]]
    with cluster.tracing():
        with cluster.fault("hang", api="write_txn_markers", broker=leader):
            producer.begin_transaction()
            producer.produce(topic, b"a", partition=0)
            producer.commit_transaction(30)  # answered once PrepareCommit is written; its markers hang
            producer.begin_transaction()
            producer.produce(topic, b"b", partition=0)
            cluster.wait_for(lambda: len(concurrent_answers()) >= 3, 20,
                             what="AddPartitionsToTxn answered CONCURRENT_TRANSACTIONS while the markers hang")
            cluster.move_transaction_coordinator(tid, target)
        producer.commit_transaction(60)
    answers = [(e["broker"], e["errors"]) for e in cluster.trace(api="add_partitions_to_txn", client_id=tid)]
    assert not [a for a in answers if a[1] == [49]], answers  # INVALID_PRODUCER_ID_MAPPING
    assert answers[-1] == (target, [0])
    assert sorted(_read_committed(cluster, topic, 2)) == [b"a", b"b"]


def test_an_abort_while_the_previous_commits_markers_are_pending_is_invalid_txn_state_as_kafkas(fauxka_cluster):
    """librdkafka sends EndTxn(ABORT) even when the transaction's only AddPartitionsToTxn was
    answered CONCURRENT_TRANSACTIONS (it counts any failed one as possibly received); the
    coordinator is then still in the previous transaction's PrepareCommit, for which Kafka 3.9's
    TransactionCoordinator.endTransaction answers INVALID_TXN_STATE, fatal to librdkafka (its issue
    4849 reports the same against Apache Kafka). This is the "EndTxn answered INVALID_TXN_STATE"
    chaos runs see when a transaction is aborted at once under faults: Kafka's answer, and nothing
    of the aborted transaction reaches the log."""
    from confluent_kafka import KafkaError, KafkaException

    cluster = fauxka_cluster
    tid = cluster.unique_topic("tid")
    producer, first, _target = _producer_and_coordinators(cluster, tid)
    leader = next(b for b in cluster.broker_ids if b != first)  # markers reach it by WriteTxnMarkers
    topic = _topic(cluster, assignment=[[leader]])
    with cluster.tracing():
        with cluster.fault("hang", api="write_txn_markers", broker=leader):
            producer.begin_transaction()
            producer.produce(topic, b"a", partition=0)
            producer.commit_transaction(30)  # PrepareCommit written; its markers hang
            producer.begin_transaction()
            producer.produce(topic, b"b", partition=0)
            cluster.wait_for(lambda: [e for e in cluster.trace(api="add_partitions_to_txn", client_id=tid)
                                      if e["errors"] == [51]], 20, what="AddPartitionsToTxn CONCURRENT_TRANSACTIONS")
            with pytest.raises(KafkaException) as raised:
                producer.abort_transaction(30)
    error = raised.value.args[0]
    assert error.code() == KafkaError.INVALID_TXN_STATE and error.fatal()
    assert cluster.trace(api="end_txn", client_id=tid)[-1]["errors"] == [48]  # INVALID_TXN_STATE
    assert _read_committed(cluster, topic, 1) == [b"a"]
