"""TxnOffsetCommit checks its committer as Kafka 3.9's validateOffsetCommit(isTransactional=true):
a consumer's group metadata sent after its group was deleted names a member of a group that no
longer exists, and Kafka (which adds the group back, Empty) answers UNKNOWN_MEMBER_ID; the
transaction must be aborted and nothing of it is committed. Shared cluster, confluent-kafka."""

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from fauxka.testing import wait_for
from tests.admin_helpers import unique


def test_offsets_of_a_deleted_groups_member_are_refused_as_unknown_member(cluster):
    topic, group = unique("src"), unique("g")
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(60)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group, "enable.auto.commit": False,
                         "session.timeout.ms": 6000})
    consumer.subscribe([topic])
    wait_for(lambda: consumer.poll(0.5) is None and consumer.assignment(), 60, 0.1, "the consumer's assignment")
    metadata = consumer.consumer_group_metadata()  # this member, this generation
    consumer.close()  # leaves: the group is Empty
    admin.delete_consumer_groups([group])[group].result(30)

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": unique("tid")})
    producer.init_transactions(60)
    producer.begin_transaction()
    with pytest.raises(KafkaException) as refused:
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 5)], metadata, 30)
    error = refused.value.args[0]
    assert error.code() == KafkaError.UNKNOWN_MEMBER_ID and error.txn_requires_abort()
    producer.abort_transaction(30)

    reader = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": group})
    assert reader.committed([TopicPartition(topic, 0)], timeout=30)[0].offset < 0  # nothing committed
    reader.close()
