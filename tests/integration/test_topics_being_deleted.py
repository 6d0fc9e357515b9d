"""A topic queued for deletion leaves Metadata at once, as in Kafka 3.9 (ZooKeeper mode): the
controller's TopicDeletionManager.onTopicDeletion tells every broker (UpdateMetadata, leader -2)
and ZkMetadataCache drops the topic, while its znodes and replicas go later.

The deletion is held back by pausing the active controller (SIGSTOP) with the marker
/admin/delete_topics/<t> written as Kafka's AdminZkClient.deleteTopic writes it; the topics live on
the two other brokers.
"""

import asyncio
import signal

import structlog
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from tests.admin_helpers import create_topics, delete_topics, send, topic_spec, unique
from tests.harness import wait_for
from fauxka.zkstore import ZkStore

# a session outlasting the pause: the paused controller stays the controller, so nobody else
# completes the deletion meanwhile (ZooKeeper's default maxSessionTimeout is 40 s)
SESSION_MS = "30000"


def _zk_create(cluster, path: str) -> None:
    async def create():
        store = ZkStore(cluster.zk_connect, 10000, structlog.get_logger())
        await store.start(10)
        try:
            await store.create(path)
        finally:
            await store.stop()
    asyncio.run(create())


def _metadata_v12(address: str, names: list[str] | None):
    topics = None if names is None else [{"name": n, "topic_id": None} for n in names]
    return send(address, 3, 12, {"topics": topics, "allow_auto_topic_creation": False,
                                 "include_topic_authorized_operations": False})


def _python_topics(address: str) -> set[str]:
    """kafka-python's topic list; it asks a broker it picks at random, so a Metadata left unanswered
    by the paused one times out and the next goes to another."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError as PythonKafkaError
    client = KafkaConsumer(bootstrap_servers=address, request_timeout_ms=3000)

    def topics():
        try:
            return client.topics()
        except PythonKafkaError:
            return None
    try:
        return wait_for(topics, 60, 0, "kafka-python's topic list")
    finally:
        client.close()


def _librdkafka_metadata(admin, topic: str | None = None):
    """librdkafka's Metadata: once it has learnt the brokers it may ask the paused one, whose
    request times out ("Failed to get metadata: Local: Timed out"); the next try goes elsewhere."""
    def metadata():
        try:
            return admin.list_topics(topic, timeout=10)
        except KafkaException:
            return None
    return wait_for(metadata, 60, 0, "librdkafka's Metadata")


def test_a_topic_queued_for_deletion_leaves_metadata_everywhere_before_it_is_deleted(make_cluster):
    cluster = make_cluster(3, {"zookeeper.session.timeout.ms": SESSION_MS})
    controller = cluster.controller_id()
    a, b = sorted(i for i in cluster.brokers if i != controller)
    live = [cluster.address_of(a), cluster.address_of(b)]
    prefix = unique("del")
    doomed, kept = f"{prefix}-doomed", f"{prefix}-kept"
    results = create_topics(cluster.controller_address(), [
        topic_spec(t, assignments={0: [a, b], 1: [b, a]}) for t in (doomed, kept)])
    assert [int(r.error_code) for r in results] == [0, 0], results
    cluster.brokers[controller].signal(signal.SIGSTOP)
    try:
        _zk_create(cluster, f"/admin/delete_topics/{doomed}")
        for address in live:
            # fauxka's own client: every broker answers alike, the topic id gone with the name
            wait_for(lambda: doomed not in {t.name for t in _metadata_v12(address, None).topics}, 30,
                     what=f"{address} dropping {doomed}")
            [by_name] = _metadata_v12(address, [doomed]).topics
            assert (int(by_name.error_code), list(by_name.partitions)) == (3, [])  # UNKNOWN_TOPIC_OR_PARTITION
            [by_name] = _metadata_v12(address, [kept]).topics
            assert int(by_name.error_code) == 0 and len(by_name.partitions) == 2
            # confluent-kafka (librdkafka), bootstrapped from this broker only
            admin = AdminClient({"bootstrap.servers": address, "allow.auto.create.topics": False})
            listed = _librdkafka_metadata(admin)
            assert doomed not in listed.topics and kept in listed.topics
            asked = _librdkafka_metadata(admin, doomed).topics[doomed]
            assert asked.error is not None and asked.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
        assert cluster.zk_get(f"/admin/delete_topics/{doomed}") is not None  # not deleted yet
        assert cluster.zk_get(f"/brokers/topics/{doomed}") is not None
        # kafka-python last: it may ask the paused broker first and wait out its request timeout
        python_topics = _python_topics(live[0])
        assert doomed not in python_topics and kept in python_topics
    finally:
        cluster.brokers[controller].signal(signal.SIGCONT)
    # the controller, back, completes the deletion it finds marked
    wait_for(lambda: cluster.zk_get(f"/admin/delete_topics/{doomed}") is None, 30, 0.2, "the marker gone")
    assert cluster.zk_get(f"/brokers/topics/{doomed}") is None


def test_a_marker_written_while_the_controller_is_active_is_completed(cluster):
    """Kafka's controller watches /admin/delete_topics (TopicDeletionHandler): a marker written by
    anyone (AdminZkClient.deleteTopic, as old tools did) deletes the topic."""
    name = unique("marked")
    [created] = create_topics(cluster.controller_address(), [topic_spec(name, 2, 2)])
    assert int(created.error_code) == 0
    _zk_create(cluster, f"/admin/delete_topics/{name}")
    wait_for(lambda: cluster.zk_get(f"/brokers/topics/{name}") is None, 30, 0.1, "the topic deleted")
    wait_for(lambda: cluster.zk_get(f"/admin/delete_topics/{name}") is None, 30, 0.1, "the marker gone")
    # and it can be created again at once
    [again] = create_topics(cluster.controller_address(), [topic_spec(name, 1, 1)])
    assert int(again.error_code) == 0, again
    delete_topics(cluster.controller_address(), [name])
