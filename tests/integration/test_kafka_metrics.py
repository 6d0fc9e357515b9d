"""Every broker serves Kafka's metrics under the names the JMX exporter with Strimzi's rules gives
them: each name on docs/kafka-metrics.md's list is scraped from a live cluster, and no kafka_* name
is served that the list does not hold."""

from prometheus_client.parser import text_string_to_metric_families

from fauxka.testing.cluster import wait_for
from tests.metrics_helpers import kafka_metric_list, sample_names, scrape, summed, traffic


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


def test_refused_batches_count_what_the_validator_found(cluster):
    """InvalidMessageCrcRecordsPerSec (a batch whose CRC does not match) and NoKeyCompactedTopicRecordsPerSec
    (keyless records on a compacted topic), all topics only, as Kafka's LogValidator records them."""
    from tests.admin_helpers import create_topics, topic_spec, unique
    from tests.data_helpers import batch, leader_of, produce

    crc, no_key = ("kafka_server_brokertopicmetrics_invalidmessagecrcrecords_total",
                   "kafka_server_brokertopicmetrics_nokeycompactedtopicrecords_total")
    before = summed(cluster, crc), summed(cluster, no_key)
    compacted = unique("compacted")
    assert [r.error_code for r in create_topics(cluster.controller_address(), [
        topic_spec(compacted, 1, 1, configs={"cleanup.policy": "compact"})])] == [0]
    leader = cluster.address_of(leader_of(cluster, compacted))
    corrupted = bytearray(batch([b"v"], keys=[b"k"]))
    corrupted[-1] ^= 0xFF  # the last value byte: the CRC no longer matches
    wait_for(lambda: int(produce(leader, compacted, 0, bytes(corrupted), acks=1)[0].error_code) == 2, 10,
             what="CORRUPT_MESSAGE")  # once the leader knows its role
    assert int(produce(leader, compacted, 0, batch([b"no key"]), acks=1)[0].error_code) == 87  # INVALID_RECORD
    assert summed(cluster, crc) >= before[0] + 1 and summed(cluster, no_key) == before[1] + 1


def test_replication_bytes_in_and_out_are_counted(cluster):
    """Followers' appends (ReplicationBytesInPerSec) and the leaders' reads for them (ReplicationBytesOutPerSec)."""
    before_in = summed(cluster, "kafka_server_brokertopicmetrics_replicationbytesin_total")
    before_out = summed(cluster, "kafka_server_brokertopicmetrics_replicationbytesout_total")
    traffic(cluster)  # 30 records on an RF 3 topic
    wait_for(lambda: summed(cluster, "kafka_server_brokertopicmetrics_replicationbytesin_total") > before_in
             and summed(cluster, "kafka_server_brokertopicmetrics_replicationbytesout_total") > before_out, 10,
             what="replication bytes counted")


def _software(cluster) -> dict[tuple[str, str], float]:
    """Open PLAINTEXT connections by client software, over every broker."""
    counts: dict[tuple[str, str], float] = {}
    for broker in cluster.brokers.values():
        for f in text_string_to_metric_families(scrape(broker.metrics_port)):
            for s in f.samples:
                if s.name == "kafka_server_socket_server_metrics_connections_software" \
                        and s.labels["listener"] == "PLAINTEXT":
                    key = (s.labels["clientSoftwareName"], s.labels["clientSoftwareVersion"])
                    counts[key] = counts.get(key, 0) + s.value
    return counts


def test_connections_are_counted_by_the_client_software_their_api_versions_names(cluster):
    """KIP-511 (librdkafka's 0016 reads it through JMX): a client's software name and version, as its
    ApiVersions v3 sends them, label its connections while they are open; an invalid name is refused."""
    from confluent_kafka.admin import AdminClient

    from tests.admin_helpers import send

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "client.software.name": "metrics-probe",
                         "client.software.version": "4.5.6"})
    admin.list_topics(timeout=20)
    wait_for(lambda: _software(cluster).get(("metrics-probe", "4.5.6"), 0) >= 1, 10, what="the probe counted")
    del admin  # closes its connections: the series stays at 0, as Kafka's IntGaugeSuite keeps it
    wait_for(lambda: _software(cluster).get(("metrics-probe", "4.5.6")) == 0, 20, what="the count back to 0")
    refused = send(cluster.address_of(1), 18, 3, {"client_software_name": "bad name!",
                                                  "client_software_version": "1"})
    assert (int(refused.error_code), len(refused.api_keys)) == (42, 0)  # INVALID_REQUEST, Kafka's error response
