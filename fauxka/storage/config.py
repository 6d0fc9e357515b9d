"""A partition log's settings, named and defaulted as Kafka's topic configs (`LogConfig` in
`storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java`, Kafka 3.9)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

LONG_MAX = 2**63 - 1

_COMPRESSION = ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")


@dataclass(frozen=True)
class LogConfig:
    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    retention_ms: int = 604800000
    retention_bytes: int = -1
    cleanup_policy: frozenset[str] = frozenset({"delete"})
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    max_message_bytes: int = 1048588
    message_timestamp_type: str = "CreateTime"
    message_timestamp_difference_max_ms: int = LONG_MAX
    compression_type: str = "producer"
    index_interval_bytes: int = 4096
    min_insync_replicas: int = 1
    min_cleanable_dirty_ratio: float = 0.5
    # KIP-937 (Kafka 3.6+): the bounds that replace difference.max.ms; both apply, tighter wins.
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = LONG_MAX
    message_downconversion_enable: bool = True  # Fetch v0-v3 (KafkaApis.maybeConvertFetchedData)

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def timestamp_before_max_ms(self) -> int:
        return min(self.message_timestamp_difference_max_ms, self.message_timestamp_before_max_ms)

    @property
    def timestamp_after_max_ms(self) -> int:
        return min(self.message_timestamp_difference_max_ms, self.message_timestamp_after_max_ms)

    @classmethod
    def from_topic_configs(cls, values: Mapping[str, str]) -> LogConfig:
        """Read Kafka topic config names (`segment.bytes`, `cleanup.policy`, ...); absent keys
        take Kafka's defaults; unknown keys are ignored."""

        def num(name: str, default: int) -> int:
            raw = values.get(name)
            return default if raw is None or str(raw).strip() == "" else int(str(raw).strip())

        d = cls()
        policy = values.get("cleanup.policy")
        policies = (
            frozenset(p.strip().lower() for p in str(policy).split(",") if p.strip())
            if policy is not None
            else d.cleanup_policy
        )
        compression = str(values.get("compression.type", d.compression_type)).strip().lower()
        if compression not in _COMPRESSION:
            raise ValueError(f"compression.type {compression!r} is not one of {_COMPRESSION}")
        ts_type = str(values.get("message.timestamp.type", d.message_timestamp_type)).strip()
        if ts_type not in ("CreateTime", "LogAppendTime"):
            raise ValueError(f"message.timestamp.type {ts_type!r} is not CreateTime or LogAppendTime")
        return cls(
            segment_bytes=num("segment.bytes", d.segment_bytes),
            segment_ms=num("segment.ms", d.segment_ms),
            retention_ms=num("retention.ms", d.retention_ms),
            retention_bytes=num("retention.bytes", d.retention_bytes),
            cleanup_policy=policies or d.cleanup_policy,
            delete_retention_ms=num("delete.retention.ms", d.delete_retention_ms),
            min_compaction_lag_ms=num("min.compaction.lag.ms", d.min_compaction_lag_ms),
            max_message_bytes=num("max.message.bytes", d.max_message_bytes),
            message_timestamp_type=ts_type,
            message_timestamp_difference_max_ms=num(
                "message.timestamp.difference.max.ms", d.message_timestamp_difference_max_ms
            ),
            compression_type=compression,
            index_interval_bytes=num("index.interval.bytes", d.index_interval_bytes),
            min_insync_replicas=num("min.insync.replicas", d.min_insync_replicas),
            min_cleanable_dirty_ratio=float(
                values.get("min.cleanable.dirty.ratio") or d.min_cleanable_dirty_ratio
            ),
            message_timestamp_before_max_ms=num(
                "message.timestamp.before.max.ms", d.message_timestamp_before_max_ms
            ),
            message_timestamp_after_max_ms=num(
                "message.timestamp.after.max.ms", d.message_timestamp_after_max_ms
            ),
            message_downconversion_enable=str(values.get("message.downconversion.enable", "true")).strip().lower()
            != "false",
        )
