"""Group coordinator metrics (Kafka's GroupMetadataManager NumGroups*/NumOffsets and
GroupCoordinator rebalance/commit rates), plus consumer lag per group and partition (committed
offset vs the partition's log end, as this broker's replica knows it), which Kafka leaves to tools.

Gauges are computed when /metrics is scraped, from the groups this broker coordinates.
"""

from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily

from fauxka.coordinator.group.coordinator import GroupCoordinator
from fauxka.coordinator.loads import PartitionLoads

from .replica_host import ReplicaHost

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

    def __init__(self, registry, groups: GroupCoordinator, loads: PartitionLoads, host: ReplicaHost):
        self._groups = groups
        self._loads = loads
        self._host = host
        registry.register(self)

    def describe(self):
        return []

    def collect(self):
        groups = dict(self._groups.groups)  # scraped from the metrics thread: copies
        by_state = GaugeMetricFamily("fauxka_groups", "Groups this broker coordinates, by state", labels=["state"])
        counts = dict.fromkeys(_STATES, 0)
        for g in groups.values():
            counts[g.state.value] += 1
        for state, n in counts.items():
            by_state.add_metric([state], n)
        yield by_state
        members = GaugeMetricFamily("fauxka_group_members", "Members of the groups this broker coordinates",
                                    labels=["group"])
        offsets = GaugeMetricFamily("fauxka_group_offsets", "Committed offsets held (NumOffsets)")
        lag = GaugeMetricFamily("fauxka_consumer_lag", "Log end offset minus the committed offset, where this "
                                "broker holds a replica of the partition", labels=["group", "topic", "partition"])
        total = 0
        for g in groups.values():
            members.add_metric([g.group_id], len(g.members))
            offsets_of = dict(g.offsets)
            total += len(offsets_of)
            for (topic, index), committed in offsets_of.items():
                high_watermark = self._host.high_watermark(topic, index)
                if high_watermark is not None:
                    lag.add_metric([g.group_id, topic, str(index)], max(high_watermark - committed.offset, 0))
        offsets.add_metric([], total)
        yield members
        yield offsets
        yield lag
        loading = GaugeMetricFamily("fauxka_group_partitions", "__consumer_offsets partitions coordinated here",
                                    labels=["state"])
        parts = list(self._loads.partitions.values())
        for state in ("loading", "active"):
            loading.add_metric([state], sum(1 for s, _ in parts if s.value == state))
        yield loading
