"""Kafka's kafka.controller MBeans as the JMX exporter with Strimzi's rules names them
(docs/kafka-metrics.md): KafkaController's gauges (ActiveControllerCount on every broker, the rest
0 except on the active controller, as Kafka's) and ControllerStats UncleanLeaderElectionsPerSec.
Read from the metadata cache when scraped (from the metrics thread: copies first).
"""

from collections.abc import Callable
from typing import Any

from .kafka_exposition import Collector, gauge, meters


class ControllerMetrics(Collector):
    def __init__(self, registry: Any, cache: Any, is_active: Callable[[], bool], unclean: Callable[[], int]):
        self._cache = cache
        self._is_active = is_active
        self._unclean = unclean
        registry.register(self)

    def collect(self):
        active = self._is_active()
        counts = self._counts() if active else {}
        yield gauge("kafka_controller_kafkacontroller_activecontrollercount",
                    "KafkaController ActiveControllerCount: 1 on the active controller", 1 if active else 0)
        for name, doc in (("OfflinePartitionsCount", "partitions without a live leader"),
                          ("PreferredReplicaImbalanceCount", "partitions not led by their preferred replica"),
                          ("GlobalTopicCount", "topics"), ("GlobalPartitionCount", "partitions"),
                          ("TopicsToDeleteCount", "topics queued for deletion"),
                          ("ActiveBrokerCount", "registered brokers"), ("FencedBrokerCount", "0 in ZooKeeper mode")):
            yield gauge(f"kafka_controller_kafkacontroller_{name.lower()}", f"KafkaController {name}: {doc} "
                        "(0 but on the active controller)", counts.get(name, 0))
        yield meters("kafka_controller_controllerstats_uncleanleaderelections", "ControllerStats "
                     "UncleanLeaderElectionsPerSec: leaders this controller elected from outside the ISR",
                     [({}, self._unclean())])

    def _counts(self) -> dict[str, int]:
        cache = self._cache
        topics = dict(cache.all_topics)
        deleting = set(cache.deleting)
        states = dict(cache.partition_states)
        live = set(cache.brokers)
        offline = imbalance = partitions = 0
        for topic, assignment in topics.items():
            for index, replicas in list(assignment.partitions.items()):
                partitions += 1
                if topic in deleting:
                    continue  # Kafka's counts leave topics queued for deletion out
                state = states.get((topic, index))
                leader = state.leader if state is not None else -1
                if leader not in live:
                    offline += 1
                if replicas and leader != replicas[0]:
                    imbalance += 1
        return {"OfflinePartitionsCount": offline, "PreferredReplicaImbalanceCount": imbalance,
                "GlobalTopicCount": len(topics), "GlobalPartitionCount": partitions,
                "TopicsToDeleteCount": len(deleting), "ActiveBrokerCount": len(live)}
