"""The fault kit's link fault: two brokers that cannot reach each other (fauxka.testing, the plugin)."""

import pytest


@pytest.mark.disruptive
def test_a_cut_link_drops_the_follower_from_the_isr_until_restored(fauxka_cluster_factory):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    cluster = fauxka_cluster_factory(brokers=3, overrides={"replica.lag.time.max.ms": "1500",
                                                           "replica.fetch.backoff.ms": "100"})
    controller = cluster.wait_for(lambda: max(cluster.controller(), 0), 10, what="a controller")
    leader, follower = [b for b in cluster.broker_ids if b != controller]  # the link to the controller stays up
    topic = cluster.unique_topic()
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic, 1, replica_assignment=[[leader, follower]])])[topic].result(30)
    cluster.wait_for(lambda: len(cluster.isr(topic, 0)) == 2, 20, what="a full ISR")
    assert cluster.leader(topic, 0) == leader
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "1"})
    with cluster.fault("link", broker=leader, peer=follower):
        def shrunk():
            producer.produce(topic, b"x", partition=0)
            producer.flush(5)
            return cluster.isr(topic, 0) == [leader]
        cluster.wait_for(shrunk, 20, what="the follower out of the ISR")
    cluster.wait_for(lambda: sorted(cluster.isr(topic, 0)) == sorted([leader, follower]), 20,
                     what="the follower back in the ISR")
