"""The data plane's Kafka MBeans, as the JMX exporter with Strimzi's rules names them
(fauxka/broker/kafka_exposition.py; docs/kafka-metrics.md lists every name and its MBean):

- kafka.server:type=BrokerTopicMetrics meters, for all topics (no label) and per topic (Kafka's
  BrokerTopicStats): BytesIn, MessagesIn, BytesOut (consumers), BytesRejected (a batch over
  max.message.bytes), Total/FailedProduceRequests and
  Total/FailedFetchRequests (per partition, failed only for unexpected errors, as Kafka's),
  Produce/FetchMessageConversions; ReplicationBytesOut, ReplicationBytesIn (a follower's appends),
  InvalidMessageCrcRecords and NoKeyCompactedTopicRecords for all topics only, as Kafka's;
- kafka.server:type=ReplicaManager: PartitionCount, LeaderCount, UnderReplicatedPartitions,
  UnderMinIsrPartitionCount, AtMinIsrPartitionCount, OfflineReplicaCount and the IsrShrinks,
  IsrExpands and FailedIsrUpdates meters;
- kafka.cluster:type=Partition per hosted partition: UnderReplicated, UnderMinIsr, AtMinIsr,
  InSyncReplicasCount, ReplicasCount, LastStableOffsetLag (0 where this broker does not lead);
- kafka.log:type=Log per replica: LogEndOffset, LogStartOffset, Size, NumLogSegments; and fauxka's
  own fauxka_log_high_watermark (Kafka has no gauge of it).
Counts are plain numbers kept as records go; gauges are read from the partitions when scraped
(from the metrics thread: copies first).
"""

from collections.abc import Callable, Collection, Iterable

from kio.schema.errors import ErrorCode
from prometheus_client.core import GaugeMetricFamily

from ..kafka_exposition import Collector, gauge, meters
from .partition import Partition

Partitions = dict[tuple[str, int], Partition]
FailedLogs = Callable[[Iterable[tuple[str, int]]], Collection[tuple[str, int]]]

# errors Kafka's ReplicaManager expects, which do not count as a failed produce / fetch request
_EXPECTED_PRODUCE_ERRORS = frozenset((ErrorCode.unknown_topic_or_partition, ErrorCode.not_leader_or_follower,
                                      ErrorCode.message_too_large, ErrorCode.record_list_too_large,
                                      ErrorCode.corrupt_message, ErrorCode.kafka_storage_error))
_EXPECTED_FETCH_ERRORS = frozenset((ErrorCode.none, ErrorCode.unknown_topic_or_partition,
                                    ErrorCode.not_leader_or_follower, ErrorCode.unknown_leader_epoch,
                                    ErrorCode.fenced_leader_epoch, ErrorCode.replica_not_available,
                                    ErrorCode.kafka_storage_error, ErrorCode.offset_out_of_range,
                                    ErrorCode.inconsistent_topic_id))
# BrokerTopicMetrics meters: exporter name -> Kafka's MBean name; the last ones exist for all topics only
TOPIC_METERS = {"bytesin": "BytesInPerSec", "messagesin": "MessagesInPerSec", "bytesout": "BytesOutPerSec",
                "totalproducerequests": "TotalProduceRequestsPerSec",
                "failedproducerequests": "FailedProduceRequestsPerSec",
                "totalfetchrequests": "TotalFetchRequestsPerSec", "failedfetchrequests": "FailedFetchRequestsPerSec",
                "bytesrejected": "BytesRejectedPerSec",
                "producemessageconversions": "ProduceMessageConversionsPerSec",
                "fetchmessageconversions": "FetchMessageConversionsPerSec",
                "replicationbytesout": "ReplicationBytesOutPerSec", "replicationbytesin": "ReplicationBytesInPerSec",
                "invalidmessagecrcrecords": "InvalidMessageCrcRecordsPerSec",
                "nokeycompactedtopicrecords": "NoKeyCompactedTopicRecordsPerSec"}
ALL_TOPICS_ONLY = frozenset(("replicationbytesout", "replicationbytesin", "invalidmessagecrcrecords",
                             "nokeycompactedtopicrecords"))
# a StorageError's `invalid` (what Kafka's LogValidator.MetricsRecorder records) -> its all-topics meter
_INVALID = {"crc": "invalidmessagecrcrecords", "no_key_compacted": "nokeycompactedtopicrecords"}


class ReplicationMetrics(Collector):
    def __init__(self, registry, partitions: Partitions, failed_logs: FailedLogs = lambda keys: ()):
        """`partitions`: the hosted partitions (read at scrape time); `failed_logs(keys)`: those
        whose log here has failed (a `storage` fault: Kafka's offline replicas)."""
        self._partitions = partitions
        self._failed_logs = failed_logs
        self._all = dict.fromkeys(TOPIC_METERS, 0)
        self._topics: dict[str, dict[str, int]] = {}
        self._isr = {"isrshrinks": 0, "isrexpands": 0, "failedisrupdates": 0}
        registry.register(self)

    def _mark(self, meter: str, topic: str, n: int) -> None:
        self._all[meter] += n
        if meter not in ALL_TOPICS_ONLY:
            counts = self._topics.get(topic)
            if counts is None:
                counts = self._topics[topic] = {}
            counts[meter] = counts.get(meter, 0) + n

    def appended(self, topic: str, size: int, records: int) -> None:
        self._mark("bytesin", topic, size)
        self._mark("messagesin", topic, records)

    def produce_request(self, topic: str, error: int, size: int = 0, invalid: str | None = None) -> None:
        """One partition of a Produce of `size` bytes (Kafka marks TotalProduceRequests per partition,
        BytesRejected with the size of a batch over max.message.bytes, and once per refused batch the
        Invalid*/NoKey* meter its validator names: `invalid`)."""
        self._mark("totalproducerequests", topic, 1)
        if error == ErrorCode.message_too_large:
            self._mark("bytesrejected", topic, size)
        if invalid in _INVALID:
            self._mark(_INVALID[invalid], topic, 1)
        if error != ErrorCode.none and error not in _EXPECTED_PRODUCE_ERRORS:
            self._mark("failedproducerequests", topic, 1)

    def fetch_request(self, topic: str, error: int) -> None:
        self._mark("totalfetchrequests", topic, 1)
        if error not in _EXPECTED_FETCH_ERRORS:
            self._mark("failedfetchrequests", topic, 1)

    def read(self, topic: str, size: int, follower: bool) -> None:
        self._mark("replicationbytesout" if follower else "bytesout", topic, size)

    def replicated_in(self, size: int) -> None:
        """A follower's append: BrokerTopicMetrics ReplicationBytesInPerSec (all topics only, as Kafka's)."""
        self._all["replicationbytesin"] += size

    def converted(self, topic: str, api: str, records: int) -> None:
        """BrokerTopicMetrics Produce/FetchMessageConversionsPerSec (api "produce" or "fetch")."""
        if records:
            self._mark(f"{api}messageconversions", topic, records)

    def isr_changed(self, kind: str) -> None:
        """kind: "shrink" or "expand" (an AlterPartition accepted), "failed" (refused)."""
        self._isr[{"shrink": "isrshrinks", "expand": "isrexpands"}.get(kind, "failedisrupdates")] += 1

    def collect(self):
        topics = {t: dict(c) for t, c in list(self._topics.items())}
        for meter, kafka_name in TOPIC_METERS.items():
            samples = [({}, self._all[meter])]
            samples += [({"topic": t}, c[meter]) for t, c in topics.items() if meter in c]
            yield meters(f"kafka_server_brokertopicmetrics_{meter}", f"BrokerTopicMetrics {kafka_name}", samples)
        for meter, count in self._isr.items():
            yield meters(f"kafka_server_replicamanager_{meter}", f"ReplicaManager {meter}PerSec", [({}, count)])
        partitions = list(self._partitions.values())
        yield from self._replica_manager(partitions)
        yield from _partition_gauges(partitions)
        yield from _log_gauges(partitions)

    def _replica_manager(self, partitions: list[Partition]):
        leading = [p for p in partitions if p.is_leader]
        isr_sizes = [(len(p.isr), len(p.replicas), p.log.min_insync_replicas) for p in leading]
        values = {
            "PartitionCount": len(partitions), "LeaderCount": len(leading),
            "UnderReplicatedPartitions": sum(1 for isr, replicas, _ in isr_sizes if isr < replicas),
            "UnderMinIsrPartitionCount": sum(1 for isr, _, min_isr in isr_sizes if isr < min_isr),
            "AtMinIsrPartitionCount": sum(1 for isr, _, min_isr in isr_sizes if isr == min_isr),
            "OfflineReplicaCount": len(self._failed_logs([p.key for p in partitions])),
        }
        for name, value in values.items():
            yield gauge(f"kafka_server_replicamanager_{name.lower()}", f"ReplicaManager {name}", value)


def _partition_gauges(partitions: list[Partition]):
    names = ("UnderReplicated", "UnderMinIsr", "AtMinIsr", "InSyncReplicasCount", "ReplicasCount",
             "LastStableOffsetLag")
    families = {n: GaugeMetricFamily(f"kafka_cluster_partition_{n.lower()}", f"Partition {n} (0 where this "
                                     "broker does not lead)", labels=["topic", "partition"]) for n in names}
    for p in partitions:
        labels = [p.topic, str(p.index)]
        leader = p.is_leader
        isr, replicas, min_isr = len(p.isr), len(p.replicas), p.log.min_insync_replicas
        log = p.log
        values = (leader and isr < replicas, leader and isr < min_isr, leader and isr == min_isr,
                  isr if leader else 0, replicas, log.high_watermark - log.last_stable_offset if leader else 0)
        for name, value in zip(names, values):
            families[name].add_metric(labels, int(value))
    return families.values()


def _log_gauges(partitions: list[Partition]):
    families = {name: GaugeMetricFamily(f"kafka_log_log_{name.lower()}", f"Log {name} per partition replica",
                                        labels=["topic", "partition"])
                for name in ("LogEndOffset", "LogStartOffset", "Size", "NumLogSegments")}
    high_watermark = GaugeMetricFamily("fauxka_log_high_watermark", "High watermark per partition replica",
                                       labels=["topic", "partition"])
    for p in partitions:
        labels, log = [p.topic, str(p.index)], p.log
        families["LogEndOffset"].add_metric(labels, log.log_end_offset)
        families["LogStartOffset"].add_metric(labels, log.log_start_offset)
        families["Size"].add_metric(labels, log.size_bytes)
        families["NumLogSegments"].add_metric(labels, len(log.segments))
        high_watermark.add_metric(labels, log.high_watermark)
    return [*families.values(), high_watermark]
