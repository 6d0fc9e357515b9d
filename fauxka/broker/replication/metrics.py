"""The data plane's Prometheus metrics (docs/data-plane.md's table maps each to Kafka's JMX name).

Per topic: bytes and messages in (BrokerTopicMetrics BytesInPerSec, MessagesInPerSec), bytes out
to consumers and to followers (BytesOutPerSec, ReplicationBytesOutPerSec); ISR shrinks and
expands (ReplicaManager IsrShrinksPerSec, IsrExpandsPerSec); records converted between message
formats (ProduceMessageConversionsPerSec: magic 0/1 appends; FetchMessageConversionsPerSec: Fetch
v0-v3 down-conversion); under-replicated partitions
(ReplicaManager UnderReplicatedPartitions); log end offset and size per partition
(Log LogEndOffset, Size), read at scrape time.
"""

from prometheus_client import Counter, Gauge
from prometheus_client.core import GaugeMetricFamily

from .partition import Partition

Partitions = dict[tuple[str, int], Partition]


class ReplicationMetrics:
    def __init__(self, registry, partitions: Partitions):
        """`partitions`: the hosted partitions (read at scrape time)."""
        self._partitions = partitions
        r = registry
        self.bytes_in = Counter("fauxka_topic_bytes_in", "Bytes appended by producers, by topic", ["topic"], registry=r)
        self.messages_in = Counter("fauxka_topic_messages_in", "Records appended by producers, by topic", ["topic"],
                                   registry=r)
        self.bytes_out = Counter("fauxka_topic_bytes_out", "Bytes fetched by consumers, by topic", ["topic"], registry=r)
        self.replication_bytes_out = Counter("fauxka_topic_replication_bytes_out", "Bytes fetched by followers, by topic",
                                             ["topic"], registry=r)
        self.conversions = Counter("fauxka_topic_message_conversions",
                                   "Records converted between message formats (magic 0/1 and 2), by topic and api",
                                   ["topic", "api"], registry=r)
        self.isr_changes = Counter("fauxka_isr_changes", "ISR shrinks and expands this leader recorded", ["kind"],
                                   registry=r)
        self.under_replicated = Gauge("fauxka_under_replicated_partitions",
                                      "Partitions led here whose ISR is smaller than their replica set", registry=r)
        self.under_replicated.set_function(self._under_replicated)
        self.leader_count = Gauge("fauxka_leader_partitions", "Partitions this broker leads", registry=r)
        self.leader_count.set_function(lambda: sum(p.is_leader for p in list(partitions.values())))
        registry.register(_LogCollector(partitions))
        self._children: dict[tuple, object] = {}

    def _child(self, metric, topic: str):
        key = (metric, topic)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(topic)
        return found

    def appended(self, topic: str, size: int, records: int) -> None:
        self._child(self.bytes_in, topic).inc(size)
        self._child(self.messages_in, topic).inc(records)

    def read(self, topic: str, size: int, follower: bool) -> None:
        self._child(self.replication_bytes_out if follower else self.bytes_out, topic).inc(size)

    def converted(self, topic: str, api: str, records: int) -> None:
        """BrokerTopicMetrics Produce/FetchMessageConversionsPerSec (api "produce" or "fetch")."""
        if records:
            self.conversions.labels(topic, api).inc(records)

    def isr_changed(self, kind: str) -> None:
        self.isr_changes.labels(kind).inc()

    def _under_replicated(self) -> int:
        return sum(1 for p in list(self._partitions.values()) if p.is_leader and len(p.isr) < len(p.replicas))


class _LogCollector:
    """Log end offset, log start offset, high watermark and size of every replica, at scrape time."""

    def __init__(self, partitions: Partitions):
        self._partitions = partitions

    def describe(self):
        return []

    def collect(self):
        families = {
            "end": GaugeMetricFamily("fauxka_log_end_offset", "Log end offset per partition replica",
                                     labels=["topic", "partition"]),
            "start": GaugeMetricFamily("fauxka_log_start_offset", "Log start offset per partition replica",
                                       labels=["topic", "partition"]),
            "hw": GaugeMetricFamily("fauxka_log_high_watermark", "High watermark per partition replica",
                                    labels=["topic", "partition"]),
            "size": GaugeMetricFamily("fauxka_log_size_bytes", "Log size per partition replica",
                                      labels=["topic", "partition"]),
        }
        for (topic, index), partition in list(self._partitions.items()):
            labels = [topic, str(index)]
            log = partition.log
            families["end"].add_metric(labels, log.log_end_offset)
            families["start"].add_metric(labels, log.log_start_offset)
            families["hw"].add_metric(labels, log.high_watermark)
            families["size"].add_metric(labels, log.size_bytes)
        return list(families.values())
