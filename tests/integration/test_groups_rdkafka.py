"""librdkafka's own group tests (node-rdkafka 3.6.1's deps/librdkafka/tests) replayed through
confluent-kafka, which is librdkafka (issue 22, items 2, 4 and 5):
- 0113 l_unsubscribe: two cooperative-sticky consumers subscribing together get one assignment
  each, which holds only with Kafka's group.initial.rebalance.delay.ms (3000): with 0 the first
  consumer is assigned alone, then gives half back (3 assign calls where the test expects 1);
- 0045 do_test_subscribe_many_updates: subscription changed again and again over many topics,
  unsubscribing now and then; the assignment always ends as the last subscription's partitions;
- 0030 MANUAL.COMMIT.ASYNC: one async OffsetCommit per message, pipelined on one connection,
  every one answered and the last one kept.
"""

import time

from tests.admin_helpers import create_topics, delete_topics, topic_spec, unique

PARTITIONS = 4


def _topics(address: str, names: list[str], partitions: int, replicas: int = 3) -> None:
    results = create_topics(address, [topic_spec(n, partitions, replicas) for n in names])
    assert [int(r.error_code) for r in results] == [0] * len(names), results


def _consumer(bootstrap: str, group: str, **extra):
    from confluent_kafka import Consumer
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                     **extra})


class _Counts:
    """librdkafka's DefaultRebalanceCb: every assign call counts, even an empty incremental one."""

    def __init__(self):
        self.assigns = self.revokes = 0

    def on_assign(self, consumer, partitions):
        self.assigns += 1
        consumer.incremental_assign(partitions)

    def on_revoke(self, consumer, partitions):
        if partitions:  # librdkafka calls the callback for an empty revoke only when partitions are lost
            self.revokes += 1
        consumer.incremental_unassign(partitions)


def _poll_until(consumers, done, timeout_s: float = 60) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(0.2)
        if done():
            return True
    return False


def test_two_cooperative_consumers_subscribing_together_get_one_assignment_each(make_cluster):
    """0113 l_unsubscribe, on a broker with Kafka's initial rebalance delay (the shared cluster has 0)."""
    cluster = make_cluster(1, {"group.initial.rebalance.delay.ms": "3000"})
    first, second, group = unique("coop"), unique("coop"), unique("g")
    _topics(cluster.controller_address(), [first, second], 2, 1)
    counts = [_Counts(), _Counts()]
    cooperative = {"partition.assignment.strategy": "cooperative-sticky"}
    c1 = _consumer(cluster.bootstrap, group, **cooperative)
    time.sleep(1)  # as test_wait_topic_exists: c1 knows its coordinator before it subscribes
    assert all(c1.list_topics(t, timeout=10).topics[t].error is None for t in (first, second))
    c1.subscribe([first, second], on_assign=counts[0].on_assign, on_revoke=counts[0].on_revoke)
    c1.poll(0.5)  # c1 joins first: with no initial delay its generation would leave c2 out
    c2 = _consumer(cluster.bootstrap, group, **cooperative)
    c2.subscribe([first, second], on_assign=counts[1].on_assign, on_revoke=counts[1].on_revoke)
    consumers = [c1, c2]
    assert _poll_until(consumers, lambda: len(c1.assignment()) == len(c2.assignment()) == 2)
    assert [c.assigns for c in counts] == [1, 1]  # one generation for both: the delay gathered them
    c1.unsubscribe()
    assert _poll_until(consumers, lambda: not c1.assignment() and len(c2.assignment()) == 4)
    assert [c.assigns for c in counts] == [1, 2] and [c.revokes for c in counts] == [1, 0]
    for consumer in consumers:
        consumer.close()


def test_resubscribing_again_and_again_ends_with_the_last_subscriptions_partitions(cluster):
    """0045 do_test_subscribe_many_updates, 20 topics instead of 100."""
    names = [unique(f"many{i}") for i in range(20)]
    _topics(cluster.controller_address(), names, PARTITIONS)
    consumer = _consumer(cluster.bootstrap, names[0])
    try:
        for i in range(len(names)):
            subscription = names[i:i + 5]
            consumer.subscribe(subscription)
            if i % 7 == 0:
                consumer.unsubscribe()
            if i % 5 == 0 or i == len(names) - 1:
                expected = set() if i % 7 == 0 else {(t, p) for t in subscription for p in range(PARTITIONS)}

                def matches():
                    return {(tp.topic, tp.partition) for tp in consumer.assignment()} == expected
                assert _poll_until([consumer], matches, 30), (i, len(consumer.assignment()), len(expected))
    finally:
        consumer.close()
        delete_topics(cluster.controller_address(), names)


def test_a_standalone_consumers_async_commit_per_message_all_complete(cluster):
    """0030 MANUAL.COMMIT.ASYNC & AUTO.STORE with assign(): 50 async commits in a row, each answered
    without error, in order, and the last one is what the group keeps."""
    from confluent_kafka import Producer, TopicPartition
    topic, group = unique("commits"), unique("g")
    _topics(cluster.controller_address(), [topic], 1)
    producer = Producer({"bootstrap.servers": cluster.bootstrap})
    for i in range(60):
        producer.produce(topic, f"m{i}".encode(), partition=0)
    assert producer.flush(30) == 0
    answered: list[tuple] = []
    consumer = _consumer(cluster.bootstrap, group,
                         on_commit=lambda err, parts: answered.append((err, [p.offset for p in parts])))
    consumer.assign([TopicPartition(topic, 0)])
    consumed = 0
    deadline = time.monotonic() + 60
    while consumed < 50 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            consumer.commit(message=message, asynchronous=True)
            consumed += 1
    assert consumed == 50
    consumer.pause([TopicPartition(topic, 0)])
    assert _poll_until([consumer], lambda: len(answered) == 50, 120), len(answered)
    assert [err for err, _ in answered] == [None] * 50
    assert [offsets for _, offsets in answered] == [[i + 1] for i in range(50)]
    [committed] = consumer.committed([TopicPartition(topic, 0)], timeout=10)
    assert committed.offset == 50
    consumer.close()
