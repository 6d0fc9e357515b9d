"""The transaction coordinator role of this broker (the Broker's `txn_role`, fauxka/broker/app.py), wired to the data plane
(Kafka's TransactionCoordinator startup / onElection / onResignation in ZK mode).

It runs while this broker leads __transaction_state partitions (leadership.py loads and unloads
them in fauxka/coordinator/txn/runtime.py); markers go out through txn_markers.py's sender. `topic_spec`
is what __transaction_state is created with on first need (FindCoordinator key_type 1,
InitProducerId), as Kafka's AutoTopicCreationManager does with TransactionStateManager's topic
configs.
"""

from fauxka.coordinator.txn.runtime import TRANSACTION_STATE_TOPIC, TXN_ROLE, TxnRuntime
from fauxka.model.errors import ErrorCode

from ..config import BrokerConfig, internal_topic_spec
from ..metadata_cache import MetadataCache
from ..replication.replica_manager import ReplicaManager
from .leadership import TopicLeadership
from .producer_ids import ProducerIdManager
from .replica_host import ReplicaHost
from .txn_markers import MarkerSender
from .txn_metrics import TxnMetrics


class TxnRole:
    def __init__(self, config: BrokerConfig, cache: MetadataCache, replicas: ReplicaManager,
                 producer_ids: ProducerIdManager, markers: MarkerSender, registry, log):
        self._config = config
        self._cache = cache
        self.markers = markers
        self.runtime = TxnRuntime(ReplicaHost(replicas), config["transaction.state.log.num.partitions"],
                                  producer_ids.generate, markers.send,
                                  max_timeout_ms=config["transaction.max.timeout.ms"],
                                  append_timeout_ms=config["request.timeout.ms"],
                                  log=log.bind(component="transactions"))
        self.txns = self.runtime.txns
        self.metrics = TxnMetrics(registry, self.txns, self.runtime.loads)
        self._leadership = TopicLeadership(TRANSACTION_STATE_TOPIC, cache, replicas, self.runtime)

    def start(self) -> None:
        """After the replica manager started (its cache listener runs before ours)."""
        self._leadership.start()
        config = self._config
        self.runtime.start(config["transaction.abort.timed.out.transaction.cleanup.interval.ms"],
                           config["transactional.id.expiration.ms"],
                           config["transaction.remove.expired.transaction.cleanup.interval.ms"])

    async def stop(self) -> None:
        self._leadership.stop()
        await self.runtime.close()
        await self.markers.close()

    def owns(self, transactional_id: str) -> bool:
        return self.runtime.owns(TXN_ROLE, transactional_id)

    def status(self, transactional_id: str) -> ErrorCode:
        return self.runtime.status(transactional_id)

    def loading(self) -> bool:
        return self.runtime.loading()

    def topic_spec(self) -> tuple[int, int, dict[str, str]]:
        """(partitions, replication factor, configs) as TransactionStateManager.transactionTopicConfigs;
        min.insync.replicas capped by the replication factor (Kafka keeps 2, which one broker cannot meet)."""
        config = self._config
        return internal_topic_spec(config, len(self._cache.brokers), "transaction.state.log.num.partitions",
                                   "transaction.state.log.replication.factor", lambda replication: {
                                       "cleanup.policy": "compact", "compression.type": "uncompressed",
                                       "unclean.leader.election.enable": "false",
                                       "min.insync.replicas": str(min(config["transaction.state.log.min.isr"], replication)),
                                       "segment.bytes": str(config["transaction.state.log.segment.bytes"])})
