"""auto.create.topics.enable (on by default, as in Kafka): Metadata for an unknown topic gets it
created, from any broker, and answers what the creation gave (Kafka 3.9's createTopicsInZk)."""

from confluent_kafka import Producer

from tests.admin_helpers import send, unique
from tests.harness import wait_for

LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC, INVALID_REPLICATION_FACTOR = 5, 3, 17, 38


def metadata(address: str, name: str, allow: bool = True):
    response = send(address, 3, 9, {"topics": [{"name": name}], "allow_auto_topic_creation": allow,
                                    "include_topic_authorized_operations": False,
                                    "include_cluster_authorized_operations": False})
    [topic] = response.topics
    return int(topic.error_code), len(topic.partitions)


def test_unknown_topics_are_created_with_the_broker_defaults(make_cluster):
    cluster = make_cluster(3, {"num.partitions": "3", "default.replication.factor": "3",
                               "offsets.topic.num.partitions": "5"})
    on_controller, elsewhere, refused = unique(), unique(), unique()
    assert metadata(cluster.controller_address(), on_controller)[0] == LEADER_NOT_AVAILABLE
    # not the controller: it has the controller create the topic and answers as the controller does
    # (kafkajs retries LEADER_NOT_AVAILABLE only)
    assert metadata(cluster.non_controller_address(), elsewhere)[0] == LEADER_NOT_AVAILABLE
    assert metadata(cluster.controller_address(), refused, allow=False)[0] == UNKNOWN_TOPIC_OR_PARTITION
    assert metadata(cluster.non_controller_address(), refused, allow=False)[0] == UNKNOWN_TOPIC_OR_PARTITION
    for name in (on_controller, elsewhere):
        assert wait_for(lambda n=name: metadata(cluster.non_controller_address(), n) == (0, 3), 10,
                        what=f"{name} auto-created")
    assert cluster.zk_get(f"/brokers/topics/{refused}") is None
    # an internal topic asked for by name gets its own settings (AutoTopicCreationManager.creatableTopic)
    assert metadata(cluster.non_controller_address(), "__consumer_offsets")[0] == LEADER_NOT_AVAILABLE
    assert wait_for(lambda: metadata(cluster.controller_address(), "__consumer_offsets") == (0, 5), 30,
                    what="__consumer_offsets with offsets.topic.num.partitions")
    [forwarded] = [e for e in cluster.audit_events() if e["resource_name"] == elsewhere]
    assert forwarded["forwarded_by"] is not None and forwarded["principal"] == "User:ANONYMOUS"
    assert metadata(cluster.controller_address(), "bad name!")[0] == INVALID_TOPIC
    assert metadata(cluster.non_controller_address(), "bad name!")[0] == INVALID_TOPIC

    # the creation's own error reaches the client: replication factor 3 with two brokers alive
    controller = cluster.controller_id()
    gone, asked = [i for i in cluster.brokers if i != controller]
    cluster.brokers[gone].stop()
    for seen_by in (asked, controller):
        wait_for(lambda b=seen_by: gone not in cluster.metadata(b).brokers, 30, what=f"broker {gone} gone")
    too_few = unique()
    assert metadata(cluster.address_of(asked), too_few)[0] == INVALID_REPLICATION_FACTOR
    assert metadata(cluster.controller_address(), too_few)[0] == INVALID_REPLICATION_FACTOR
    assert cluster.zk_get(f"/brokers/topics/{too_few}") is None


def test_a_producer_bootstrapped_from_a_non_controller_creates_its_topic(cluster):
    """The first thing every tutorial does, through a broker that is not the controller."""
    topic = unique("tutorial")
    delivered = []
    producer = Producer({"bootstrap.servers": cluster.non_controller_address(), "message.timeout.ms": 60000})
    producer.produce(topic, b"hello", on_delivery=lambda err, msg: delivered.append((err, msg.partition())))
    assert producer.flush(60) == 0
    assert delivered == [(None, 0)]
