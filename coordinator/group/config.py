"""The broker keys the group coordinator reads (Kafka's GroupConfig / OffsetConfig defaults)."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GroupConfig:
    min_session_timeout_ms: int = 6000  # group.min.session.timeout.ms
    max_session_timeout_ms: int = 1_800_000  # group.max.session.timeout.ms
    initial_rebalance_delay_ms: int = 3000  # group.initial.rebalance.delay.ms
    max_size: int = 2**31 - 1  # group.max.size
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes
    offsets_retention_ms: int = 7 * 24 * 3600 * 1000  # offsets.retention.minutes
    offsets_retention_check_interval_ms: int = 600_000  # offsets.retention.check.interval.ms

    @classmethod
    def from_broker(cls, get) -> "GroupConfig":
        """From a broker config lookup `get(key, default)`."""
        return cls(
            min_session_timeout_ms=int(get("group.min.session.timeout.ms", 6000)),
            max_session_timeout_ms=int(get("group.max.session.timeout.ms", 1_800_000)),
            initial_rebalance_delay_ms=int(get("group.initial.rebalance.delay.ms", 3000)),
            max_size=int(get("group.max.size", 2**31 - 1)),
            offset_metadata_max_bytes=int(get("offset.metadata.max.bytes", 4096)),
            offsets_retention_ms=int(get("offsets.retention.minutes", 10080)) * 60_000,
            offsets_retention_check_interval_ms=int(get("offsets.retention.check.interval.ms", 600_000)),
        )
