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
        """From a broker config lookup `get(key)` (fauxka/model/broker_keys.py holds the keys and defaults)."""
        return cls(
            min_session_timeout_ms=get("group.min.session.timeout.ms"),
            max_session_timeout_ms=get("group.max.session.timeout.ms"),
            initial_rebalance_delay_ms=get("group.initial.rebalance.delay.ms"),
            max_size=get("group.max.size"),
            offset_metadata_max_bytes=get("offset.metadata.max.bytes"),
            offsets_retention_ms=get("offsets.retention.minutes") * 60_000,
            offsets_retention_check_interval_ms=get("offsets.retention.check.interval.ms"),
        )
