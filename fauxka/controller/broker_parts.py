"""What the controller uses of the broker it runs in, typed as Protocols.

The broker's classes (fauxka/broker/metadata_cache.py's MetadataCache, config.py's BrokerConfig,
cache_purgatory.py's CachePurgatory) satisfy them; importing those classes here would run an
arrow from the controller back up into the broker, which imports the controller. The
composition root (fauxka/broker/app.py) hands the real objects to the controller's areas.
"""

from typing import Any, Callable, Iterable, Mapping, Protocol

from fauxka.zkstore import paths as zp


class Metadata(Protocol):
    """The broker's metadata cache, as the controller reads it and records its own writes in it."""

    brokers: dict[int, zp.BrokerRegistration]
    broker_epochs: dict[int, int]
    partition_states: dict[tuple[str, int], zp.PartitionState]
    deleting: set[str]
    topic_configs: dict[str, dict[str, str]]
    broker_configs: dict[str, dict[str, str]]
    applied_by_broker: dict[int, int]
    finalized_features: dict[str, int]
    features_epoch: int
    topics: Mapping[str, zp.TopicAssignment]  # what clients are told of (none being deleted)

    @property
    def all_topics(self) -> dict[str, zp.TopicAssignment]: ...

    def partitions_of(self, topic: str) -> dict[int, list[int]]: ...

    def subscribe(self, listener: Callable[[tuple], None]) -> Callable[[], None]: ...

    def watch_owned(self, topics: Iterable[str] | None = None) -> None: ...

    def expect_written_topics(self, topics: Iterable[str]) -> None: ...

    def record_written_topic(self, topic: str, assignment: zp.TopicAssignment, configs: dict[str, str],
                             states: dict[int, zp.PartitionState]) -> None: ...

    def record_deleted_topic(self, topic: str) -> None: ...

    def record_assignment(self, topic: str, assignment: zp.TopicAssignment) -> None: ...

    def record_partition_state(self, topic: str, partition: int, state: zp.PartitionState) -> None: ...


class Settings(Protocol):
    """The broker's configuration: its id, a key's value, the static properties as given."""

    broker_id: int
    originals: dict[str, Any]

    def __getitem__(self, key: str) -> Any: ...


class CacheWaits(Protocol):
    """Waits until the metadata cache shows what the controller wrote, each bounded by its timeout."""

    async def wait(self, topics: set[str], complete: Callable[[set[str]], set[str]],
                   timeout_s: float) -> set[str]: ...

    def close(self) -> None: ...
