"""The partitions this broker hosts and the waits on them: what the replica manager's parts share
(appends, reads, follower fetches, ISR changes, metrics), so that none of them needs the manager."""

from collections.abc import Callable

from fauxka.model.errors import ErrorCode, KafkaError

from ..metadata_cache import MetadataCache
from ..purgatory import Purgatory
from .partition import Partition


class HostedPartitions:
    def __init__(self, broker_id: int, cache: MetadataCache):
        self.broker_id = broker_id
        self._cache = cache
        self.partitions: dict[tuple[str, int], Partition] = {}  # the replica manager adds and removes them
        # every wait (acks=all, long-poll fetch, DeleteRecords) keyed by (topic, partition), woken by
        # appends and high-watermark moves
        self.purgatory = Purgatory()
        # bytes a follower appended (the replica manager points it at BrokerTopicMetrics ReplicationBytesIn)
        self.replicated_in: Callable[[int], None] = lambda size: None

    def assigned(self, topic: str, index: int) -> list[int] | None:
        """The partition's replicas if the controller assigned one of them to this broker."""
        assignment = self._cache.all_topics.get(topic)
        replicas = assignment.partitions.get(index) if assignment is not None else None
        return replicas if replicas is not None and self.broker_id in replicas else None

    def leader_partition(self, topic: str, index: int, current_leader_epoch: int = -1) -> Partition:
        """The partition if this broker leads it, else KafkaError (Kafka's getPartitionOrException)."""
        return self.local_partition(topic, index, current_leader_epoch, require_leader=True)

    def local_partition(self, topic: str, index: int, current_leader_epoch: int, require_leader: bool) -> Partition:
        """The partition's replica here, leader or (not `require_leader`) follower, at the epoch the
        request names; else KafkaError (Kafka's getPartitionOrException + localLogWithEpochOrThrow)."""
        partition = self.partitions.get((topic, index))
        if partition is None:
            if (topic, index) in self._cache.partition_states or self.assigned(topic, index) is not None:
                raise KafkaError(ErrorCode.not_leader_or_follower)
            raise KafkaError(ErrorCode.unknown_topic_or_partition)
        fenced = partition.check_epoch(current_leader_epoch)
        if fenced is not None:
            raise KafkaError(fenced)
        if require_leader and not partition.is_leader:
            raise KafkaError(ErrorCode.not_leader_or_follower)
        return partition

    def listener_racks(self, listener: str) -> dict[int, str | None]:
        """broker id -> rack of the live brokers with an endpoint on `listener` (the replicas a
        consumer that came in on it can be sent to)."""
        return {broker_id: reg.rack for broker_id, reg in self._cache.brokers.items()
                if reg.endpoint(listener) is not None}

    def current_leader(self, topic: str, index: int) -> tuple[int, int]:
        """(leader id, leader epoch) as the metadata cache knows them, for NOT_LEADER hints."""
        state = self._cache.partition_states.get((topic, index))
        return (state.leader, state.leader_epoch) if state is not None else (-1, -1)

    def high_watermark_moved(self, partition: Partition) -> None:
        """Wake whoever waits on this partition (acks=all produces, consumers' long polls)."""
        self.purgatory.wake(partition.key)
