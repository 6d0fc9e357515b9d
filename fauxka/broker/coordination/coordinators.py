"""The two coordinators of this broker, wired to the data plane (Kafka's GroupCoordinator and
TransactionCoordinator startup / onElection / onResignation in ZooKeeper mode), built once by the
composition root (fauxka/broker/app.py):

- one partition writer (replica_writer.py) under both, over the replica manager;
- per internal topic one coordinator runtime (fauxka/coordinator/runtime.py) serving its
  coordinator: __consumer_offsets for the GroupCoordinator, __transaction_state for the
  TransactionCoordinator; leadership.py has each runtime load the partitions this broker leads
  and unload the others;
- the transaction markers' sender (txn_markers.py), the producer ids (producer_ids.py), the
  metrics (group_metrics.py, txn_metrics.py), each runtime's housekeeping, and the offsets of a
  deleted topic removed;
- what the internal topics are created with on first need (FindCoordinator, InitProducerId), as
  Kafka's AutoTopicCreationManager does with GroupCoordinator.offsetsTopicConfigs and
  TransactionStateManager.transactionTopicConfigs.
"""

import asyncio
from typing import Awaitable, Callable

from fauxka.coordinator.group.config import GroupConfig
from fauxka.coordinator.group.coordinator import GroupCoordinator
from fauxka.coordinator.runtime import CoordinatorRuntime
from fauxka.coordinator.txn.coordinator import TransactionCoordinator
from fauxka.model.topic_names import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC

from ..config import BrokerConfig, internal_topic_spec
from ..metadata_cache import MetadataCache
from ..replication.replica_manager import ReplicaManager
from .group_metrics import GroupCounters, GroupMetrics
from .leadership import TopicLeadership
from .replica_writer import ReplicaPartitionWriter
from .producer_ids import ProducerIdManager
from .txn_markers import MarkerSender
from .txn_metrics import TxnMetrics


class Coordinators:
    def __init__(self, config: BrokerConfig, cache: MetadataCache, replicas: ReplicaManager,
                 producer_ids: ProducerIdManager, dial: Callable[[int, float, str], Awaitable], registry, log):
        """`dial`: inter-broker connections for the markers sent to other leaders (txn_markers.py)."""
        self._config = config
        self._cache = cache
        self.writer = ReplicaPartitionWriter(replicas)
        group_logger = log.bind(component="groups")
        self.group_runtime = CoordinatorRuntime(GROUP_METADATA_TOPIC, self.writer, config["offsets.topic.num.partitions"],
                                                append_timeout_ms=config["offsets.commit.timeout.ms"], log=group_logger)
        group_config = GroupConfig.from_broker(config.__getitem__)
        self._retention_check_ms = group_config.offsets_retention_check_interval_ms
        self.groups = GroupCoordinator(group_config, self.group_runtime, metrics=GroupCounters(registry))
        self.group_runtime.serve(self.groups)
        self.writer.on_markers(GROUP_METADATA_TOPIC, self.groups.txn_marker_written)
        txn_logger = log.bind(component="transactions")
        self.txn_runtime = CoordinatorRuntime(TRANSACTION_STATE_TOPIC, self.writer,
                                              config["transaction.state.log.num.partitions"],
                                              append_timeout_ms=config["request.timeout.ms"], log=txn_logger)
        self.markers = MarkerSender(self.writer, cache, config.broker_id, dial, config["request.timeout.ms"], log)
        self.transactions = TransactionCoordinator(self.txn_runtime, producer_ids.generate, self.markers,
                                                   max_timeout_ms=config["transaction.max.timeout.ms"], logger=txn_logger)
        self.txn_runtime.serve(self.transactions)
        self.group_metrics = GroupMetrics(registry, self.groups, self.group_runtime, self.writer)
        self.txn_metrics = TxnMetrics(registry, self.transactions, self.txn_runtime)
        self._leaderships = [TopicLeadership(GROUP_METADATA_TOPIC, cache, replicas, self.group_runtime),
                             TopicLeadership(TRANSACTION_STATE_TOPIC, cache, replicas, self.txn_runtime)]
        self._unsubscribe = None
        self._tasks: set[asyncio.Task] = set()

    def start(self) -> None:
        """After the replica manager started (its cache listener runs before ours)."""
        for leadership in self._leaderships:
            leadership.start()
        self._unsubscribe = self._cache.subscribe(self._on_cache_event)
        config = self._config
        self.group_runtime.every(self._retention_check_ms, self.groups.expire_offsets, "expire-offsets",
                                 "offset expiry failed")
        self.txn_runtime.every(config["transaction.abort.timed.out.transaction.cleanup.interval.ms"],
                               self.transactions.abort_timed_out, "abort-timed-out-transactions",
                               "transaction coordinator housekeeping failed")
        expiration_ms = config["transactional.id.expiration.ms"]
        self.txn_runtime.every(config["transaction.remove.expired.transaction.cleanup.interval.ms"],
                               lambda: self.transactions.expire_ids(expiration_ms), "expire-transactional-ids",
                               "transaction coordinator housekeeping failed")

    async def stop(self) -> None:
        """The transactions first (their markers' sender last), then the groups."""
        for leadership in self._leaderships:
            leadership.stop()
        await self.txn_runtime.close()
        await self.transactions.close()
        await self.markers.close()
        if self._unsubscribe is not None:
            self._unsubscribe()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.group_runtime.close()
        self.groups.close()

    def _on_cache_event(self, event: tuple) -> None:
        """A deleted topic's committed offsets are removed (Kafka's handleDeletedPartitions)."""
        if event[0] == "topic" and event[1] != GROUP_METADATA_TOPIC and event[1] not in self._cache.topics:
            task = asyncio.get_running_loop().create_task(self.groups.remove_topic_offsets(event[1]),
                                                          name="group-offsets-of-deleted-topic")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    # --- the internal topics, as created on first need ---------------------------------------------------
    def offsets_topic_spec(self) -> tuple[int, int, dict[str, str]]:
        """(partitions, replication factor, configs) of __consumer_offsets, as Kafka's
        GroupCoordinator.offsetsTopicConfigs."""
        segment = str(self._config["offsets.topic.segment.bytes"])
        return internal_topic_spec(self._config, len(self._cache.brokers), "offsets.topic.num.partitions",
                                   "offsets.topic.replication.factor",
                                   lambda _r: {"cleanup.policy": "compact", "compression.type": "producer",
                                               "segment.bytes": segment})

    def transaction_topic_spec(self) -> tuple[int, int, dict[str, str]]:
        """(partitions, replication factor, configs) as TransactionStateManager.transactionTopicConfigs;
        min.insync.replicas capped by the replication factor (Kafka keeps 2, which one broker cannot meet)."""
        config = self._config
        return internal_topic_spec(config, len(self._cache.brokers), "transaction.state.log.num.partitions",
                                   "transaction.state.log.replication.factor", lambda replication: {
                                       "cleanup.policy": "compact", "compression.type": "uncompressed",
                                       "unclean.leader.election.enable": "false",
                                       "min.insync.replicas": str(min(config["transaction.state.log.min.isr"], replication)),
                                       "segment.bytes": str(config["transaction.state.log.segment.bytes"])})
