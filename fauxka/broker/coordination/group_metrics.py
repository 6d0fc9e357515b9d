"""Group coordinator metrics: Kafka's kafka.coordinator.group:type=GroupMetadataManager gauges
(NumGroups, NumGroups{State}, NumOffsets) and group-coordinator-metrics partition-load-time-max/-avg,
named as the JMX exporter names them with config/kafka-metrics-extra-rules.yaml added to Strimzi's
rules (which export nothing of kafka.coordinator.* nor of the kafka.server beans without `name=`);
fauxka's own rebalances and offset commits counters, and consumer lag per group and partition
(committed offset vs the partition's log end, as this broker's replica knows it), which Kafka
leaves to tools.

Gauges are computed when /metrics is scraped, from the groups this broker coordinates.
"""

import time

from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily

from fauxka.coordinator.group.coordinator import GroupCoordinator
from fauxka.coordinator.runtime import CoordinatorRuntime

from ..kafka_exposition import gauge, load_times
from .replica_writer import ReplicaPartitionWriter

_MANAGER = "kafka_coordinator_group_groupmetadatamanager"
_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")


class GroupCounters:
    """What the GroupCoordinator counts as it goes (its `metrics`)."""

    def __init__(self, registry):
        self.rebalances = Counter("fauxka_group_rebalances", "Rebalances started (PreparingRebalance entered)",
                                  registry=registry)
        self.offset_commits = Counter("fauxka_group_offset_commits", "Offsets committed (partitions)",
                                      registry=registry)

    def rebalance(self, group_id: str) -> None:
        self.rebalances.inc()

    def commits(self, count: int) -> None:
        self.offset_commits.inc(count)


class GroupMetrics:
    """The gauges, read from the groups and their partitions when scraped."""

    def __init__(self, registry, groups: GroupCoordinator, runtime: CoordinatorRuntime, writer: ReplicaPartitionWriter):
        self._groups = groups
        self._loads = runtime  # its partitions and load times
        self._writer = writer
        registry.register(self)

    def describe(self):
        return []

    def collect(self):
        groups = dict(self._groups.groups)  # scraped from the metrics thread: copies
        counts = dict.fromkeys(_STATES, 0)
        for g in groups.values():
            counts[g.state.value] += 1
        yield gauge(f"{_MANAGER}_numgroups", "GroupMetadataManager NumGroups: groups coordinated here", len(groups))
        for state, n in counts.items():
            yield gauge(f"{_MANAGER}_numgroups{state.lower()}", f"GroupMetadataManager NumGroups{state}", n)
        members = GaugeMetricFamily("fauxka_group_members", "Members of the groups this broker coordinates",
                                    labels=["group"])
        lag = GaugeMetricFamily("fauxka_consumer_lag", "Log end offset minus the committed offset, where this "
                                "broker holds a replica of the partition", labels=["group", "topic", "partition"])
        total = 0
        for g in groups.values():
            members.add_metric([g.group_id], len(g.members))
            offsets_of = dict(g.offsets)
            total += len(offsets_of)
            for (topic, index), committed in offsets_of.items():
                high_watermark = self._writer.high_watermark(topic, index)
                if high_watermark is not None:
                    lag.add_metric([g.group_id, topic, str(index)], max(high_watermark - committed.offset, 0))
        yield members
        yield gauge(f"{_MANAGER}_numoffsets", "GroupMetadataManager NumOffsets: committed offsets held", total)
        yield lag
        loading = GaugeMetricFamily("fauxka_group_partitions", "__consumer_offsets partitions coordinated here",
                                    labels=["state"])
        parts = list(self._loads.partitions.values())
        for state in ("loading", "active"):
            loading.add_metric([state], sum(1 for s, _ in parts if s.value == state))
        yield loading
        yield from load_times("kafka_server_group_coordinator_metrics", "group-coordinator-metrics",
                              self._loads.recent_loads, time.monotonic())
