"""Transaction coordinator metrics: Kafka's transaction-coordinator-metrics partition-load-time-max
/ -avg (ms, loads finished in the last 30 seconds, as Kafka's sensor window; named as the JMX exporter
names them with config/kafka-metrics-extra-rules.yaml added to Strimzi's rules), the transactional ids
coordinated here by state (Kafka has no such gauge: `kafka-transactions --list`), the transactions
completed and timed out, and the time from Prepare* to every marker written (what Kafka's
TransactionMarkerChannelManager queues hold).

Gauges are computed when /metrics is scraped (from the metrics thread: copies first).
"""

import time

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, SummaryMetricFamily

from fauxka.coordinator.runtime import CoordinatorRuntime
from fauxka.coordinator.txn.coordinator import TransactionCoordinator
from fauxka.coordinator.txn.state import TxnState

from ..kafka_exposition import load_times

LOAD_WINDOW_S = 30


class TxnMetrics:
    def __init__(self, registry, txns: TransactionCoordinator, runtime: CoordinatorRuntime):
        self._txns = txns
        self._loads = runtime  # its partitions and load times
        registry.register(self)

    def describe(self):
        return []

    def collect(self):
        txns, stats = list(self._txns.txns.values()), self._txns.stats
        by_state = GaugeMetricFamily("fauxka_transactions", "Transactional ids this broker coordinates, by state",
                                     labels=["state"])
        counts = {s.display: 0 for s in TxnState}
        for meta in txns:
            counts[meta.state.display] += 1
        for state, n in counts.items():
            by_state.add_metric([state], n)
        yield by_state
        completed = CounterMetricFamily("fauxka_transactions_completed", "Transactions completed here "
                                        "(CompleteCommit / CompleteAbort written)", labels=["result"])
        completed.add_metric(["commit"], stats.completed[True])
        completed.add_metric(["abort"], stats.completed[False])
        yield completed
        yield CounterMetricFamily("fauxka_transactions_timed_out", "Transactions aborted by the coordinator "
                                  "after transaction.timeout.ms", value=stats.timed_out)
        yield SummaryMetricFamily("fauxka_transaction_markers_seconds", "From Prepare* replicated to every "
                                  "partition's marker written", count_value=stats.markers_count,
                                  sum_value=stats.markers_seconds)
        pending = GaugeMetricFamily("fauxka_transaction_markers_pending", "Transactions whose markers are "
                                    "being written")
        pending.add_metric([], sum(1 for meta in txns if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)))
        yield pending
        parts = list(self._loads.partitions.values())
        partitions = GaugeMetricFamily("fauxka_transaction_partitions", "__transaction_state partitions "
                                       "coordinated here", labels=["state"])
        for state in ("loading", "active"):
            partitions.add_metric([state], sum(1 for s, _ in parts if s.value == state))
        yield partitions
        yield from load_times("kafka_server_transaction_coordinator_metrics", "transaction-coordinator-metrics",
                              self._loads.recent_loads, time.monotonic(), LOAD_WINDOW_S)
