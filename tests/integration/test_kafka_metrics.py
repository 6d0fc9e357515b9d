"""Every broker serves Kafka's metrics under the names the JMX exporter with Strimzi's rules gives
them: each name on docs/kafka-metrics.md's list is scraped from a live cluster, and no kafka_* name
is served that the list does not hold."""

from prometheus_client.parser import text_string_to_metric_families

from fauxka.testing.cluster import wait_for
from tests.metrics_helpers import kafka_metric_list, sample_names, scrape, traffic


def _served(cluster) -> set[str]:
    names: set[str] = set()
    for broker in cluster.brokers.values():
        names |= sample_names(scrape(broker.metrics_port))
    return names


def test_every_listed_kafka_metric_is_served_and_only_those(cluster):
    listed = kafka_metric_list()
    assert len(listed) > 60
    traffic(cluster)
    missing: set[str] = set()

    def all_served() -> bool:
        missing.clear()
        missing.update(set(listed) - _served(cluster))
        return not missing

    wait_for(all_served, 15, interval_s=0.5, what="every listed name served")
    rejected = [s.value for b in cluster.brokers.values()
                for f in text_string_to_metric_families(scrape(b.metrics_port)) for s in f.samples
                if s.name == "kafka_server_brokertopicmetrics_bytesrejected_total" and s.labels.get("topic")]
    assert rejected and max(rejected) > 5000  # the record over max.message.bytes, counted for its topic
    unlisted = {name for name in _served(cluster) if name.startswith("kafka_")} - set(listed)
    assert not unlisted, f"served but not on docs/kafka-metrics.md: {sorted(unlisted)}"


def test_replication_bytes_in_and_out_are_counted(cluster):
    """Followers' appends (ReplicationBytesInPerSec) and the leaders' reads for them (ReplicationBytesOutPerSec)."""
    def total(name: str) -> float:
        return sum(s.value for b in cluster.brokers.values()
                   for f in text_string_to_metric_families(scrape(b.metrics_port)) for s in f.samples if s.name == name)

    before_in = total("kafka_server_brokertopicmetrics_replicationbytesin_total")
    before_out = total("kafka_server_brokertopicmetrics_replicationbytesout_total")
    traffic(cluster)  # 30 records on an RF 3 topic
    wait_for(lambda: total("kafka_server_brokertopicmetrics_replicationbytesin_total") > before_in
             and total("kafka_server_brokertopicmetrics_replicationbytesout_total") > before_out, 10,
             what="replication bytes counted")
