"""The transaction coordinator role of this broker, wired to the data plane (Kafka's
TransactionCoordinator startup / onElection / onResignation in ZK mode).

It runs while this broker leads __transaction_state partitions: the metadata cache's
("partition", "__transaction_state", p) events load or unload a partition
(coordinator/txn/runtime.py); markers go out through broker/txn_markers.py. `ensure_topic`
creates __transaction_state on first need (FindCoordinator key_type 1, InitProducerId), as Kafka's
AutoTopicCreationManager does with TransactionStateManager's topic configs.
"""

from typing import TYPE_CHECKING

from coordinator.txn.runtime import TRANSACTION_STATE_TOPIC, TxnRuntime

from .auto_create import internal_topic_spec
from .txn_markers import MarkerSender
from .txn_metrics import TxnMetrics

if TYPE_CHECKING:
    from .app import Broker


class TxnCoordinator:
    def __init__(self, broker: "Broker", host):
        self._broker = broker
        config = broker.config
        self.markers = MarkerSender(broker, config["request.timeout.ms"])
        self.runtime = TxnRuntime(host, config["transaction.state.log.num.partitions"],
                                  broker.producer_ids.generate, self.markers.send,
                                  max_timeout_ms=config["transaction.max.timeout.ms"],
                                  append_timeout_ms=config["request.timeout.ms"],
                                  log=broker.log.bind(component="transactions"))
        self.txns = self.runtime.txns
        self.metrics = TxnMetrics(broker.metrics.registry, self)
        self._unsubscribe = None

    def start(self) -> None:
        self._unsubscribe = self._broker.cache.subscribe(self._on_cache_event)
        self._sync_partition_count()
        for (topic, index) in list(self._broker.replicas.partitions):
            if topic == TRANSACTION_STATE_TOPIC:
                self._apply(index)
        config = self._broker.config
        self.runtime.start(config["transaction.abort.timed.out.transaction.cleanup.interval.ms"],
                           config["transactional.id.expiration.ms"],
                           config["transaction.remove.expired.transaction.cleanup.interval.ms"])

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        await self.runtime.close()
        await self.markers.close()

    def _sync_partition_count(self) -> None:
        assignment = self._broker.cache.topics.get(TRANSACTION_STATE_TOPIC)
        if assignment is not None and assignment.partitions:
            self.runtime.num_partitions = len(assignment.partitions)

    def _on_cache_event(self, event: tuple) -> None:
        if event[0] == "partition" and event[1] == TRANSACTION_STATE_TOPIC:
            self._sync_partition_count()
            self._apply(event[2])
        elif event[0] == "topic" and event[1] == TRANSACTION_STATE_TOPIC:
            self._sync_partition_count()
            for index in {*self.runtime.partitions,
                          *(i for t, i in self._broker.replicas.partitions if t == TRANSACTION_STATE_TOPIC)}:
                self._apply(index)

    def _apply(self, index: int) -> None:
        self.runtime.loads.follow(index, self._broker.replicas.partitions.get((TRANSACTION_STATE_TOPIC, index)))

    def topic_spec(self) -> tuple[int, int, dict[str, str]]:
        """(partitions, replication factor, configs) as TransactionStateManager.transactionTopicConfigs;
        min.insync.replicas capped by the replication factor (Kafka keeps 2, which one broker cannot meet)."""
        config = self._broker.config
        return internal_topic_spec(config, self._broker.cache, "transaction.state.log.num.partitions",
                                   "transaction.state.log.replication.factor", lambda replication: {
                                       "cleanup.policy": "compact", "compression.type": "uncompressed",
                                       "unclean.leader.election.enable": "false",
                                       "min.insync.replicas": str(min(config["transaction.state.log.min.isr"], replication)),
                                       "segment.bytes": str(config["transaction.state.log.segment.bytes"])})
