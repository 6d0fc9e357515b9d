"""Kafka's meters, gauges and histograms as Prometheus sees them through the JMX exporter with
Strimzi's rules (packaging/examples/metrics/kafka-metrics.yaml in strimzi/strimzi-kafka-operator),
built with prometheus-client's metric families. docs/kafka-metrics.md lists every name served and
the MBean it comes from.

The exporter's rules, for an MBean `kafka.<domain>:type=T,name=N[,k=v...]` (names lower-cased,
label names as Kafka's tags):
- a Meter `NPerSec`: its Count as a counter `kafka_<domain>_<t>_<n>_total`;
- a Gauge: its Value as `kafka_<domain>_<t>_<n>`;
- a Histogram or Timer: its Count as a counter `kafka_<domain>_<t>_<n>_count_total` (the exporter
  1.x appends `_total` to every counter) and each `<q>thPercentile` as the gauge
  `kafka_<domain>_<t>_<n>{quantile="0.<q>"}`; Mean, Min, Max and the rates are not exported.

Kafka's Yammer histograms keep an exponentially decaying reservoir of 1028 samples; here the last
1028 samples, and Yammer's percentile arithmetic over them.
"""

import collections
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

RESERVOIR = 1028
# Yammer's snapshot attributes and the exporter's quantile label for each ("0.$N" of "$NthPercentile")
PERCENTILES = (("0.50", 0.50), ("0.75", 0.75), ("0.95", 0.95), ("0.98", 0.98), ("0.99", 0.99), ("0.999", 0.999))


class Samples:
    """One Yammer histogram: how many values it was given, and the last RESERVOIR of them."""

    __slots__ = ("count", "recent")

    def __init__(self) -> None:
        self.count = 0
        self.recent: collections.deque[float] = collections.deque(maxlen=RESERVOIR)

    def update(self, value: float) -> None:
        self.count += 1
        self.recent.append(value)

    def percentiles(self, wanted=PERCENTILES) -> list[tuple[str, float]]:
        """(quantile label, value) as Yammer's UniformSnapshot.getValue computes them; 0 when empty."""
        values = sorted(list(self.recent))  # a copy first: the broker's thread appends while we scrape
        return [(label, percentile(values, q)) for label, q in wanted]


def percentile(values: list[float], quantile: float) -> float:
    """Yammer's Snapshot.getValue: the interpolated value at quantile * (n + 1) of the sorted values."""
    n = len(values)
    if n == 0:
        return 0.0
    pos = quantile * (n + 1)
    index = int(pos)
    if index < 1:
        return float(values[0])
    if index >= n:
        return float(values[-1])
    lower, upper = values[index - 1], values[index]
    return lower + (pos - index) * (upper - lower)


def histogram(name: str, doc: str, labels: list[str], items: Iterable[tuple[list[str], Samples]]
              ) -> Iterator[Metric]:
    """The two families the exporter makes of one Kafka histogram MBean (per label values)."""
    count = CounterMetricFamily(f"{name}_count", doc, labels=labels)
    gauge = GaugeMetricFamily(name, doc, labels=[*labels, "quantile"])
    for values, samples in items:
        count.add_metric(values, samples.count)
        for label, value in samples.percentiles():
            gauge.add_metric([*values, label], value)
    yield count
    yield gauge


def meters(name: str, doc: str, samples: Iterable[tuple[dict[str, str], float]]) -> Metric:
    """A counter family whose samples may have different label sets: Kafka's all-topics meter
    (no label) beside its per-topic ones (topic=...), as the exporter serves both under one name."""
    family = Metric(name, doc, "counter")
    for labels, value in samples:
        family.add_sample(f"{name}_total", labels, value)
    return family


def gauge(name: str, doc: str, value: float, labels: dict[str, str] | None = None) -> Metric:
    family = Metric(name, doc, "gauge")
    family.add_sample(name, labels or {}, value)
    return family


def load_times(name: str, doc: str, recent_loads: Iterable[tuple[float, float]], now: float,
               window_s: float = 30) -> Iterator[Metric]:
    """A coordinator's partition-load-time-max / -avg (ms) over the loads finished in the last
    `window_s` seconds (Kafka's sensor window); `recent_loads`: (monotonic end, ms)."""
    recent = [ms for at, ms in list(recent_loads) if at >= now - window_s]
    yield gauge(f"{name}_partition_load_time_max", f"{doc} partition-load-time-max, ms", max(recent) if recent else 0.0)
    yield gauge(f"{name}_partition_load_time_avg", f"{doc} partition-load-time-avg, ms",
                sum(recent) / len(recent) if recent else 0.0)


class Collector:
    """prometheus-client's custom collector protocol: collect() at scrape time; describe() empty,
    so the registry does not call collect() at registration."""

    def describe(self) -> list[Any]:
        return []
