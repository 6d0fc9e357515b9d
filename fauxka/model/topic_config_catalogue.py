"""Kafka 3.4's topic-level configs (LogConfig) and their broker-level synonyms (KafkaConfig).

Pure data; the logic lives in `fauxka.model.topic_configs`. Order matters:

- `TOPIC_CONFIGS` is in LogConfig's definition order, which is the order in which
  ConfigDef.parse checks values (so the first bad value in this order is the one reported).
- `TopicConfigDef.synonyms` is LogConfig.AllTopicConfigSynonyms: the first broker key set wins.

Defaults are the strings DescribeConfigs reports (ConfigDef.convertToString of the parsed default).
"""

from dataclasses import dataclass

HOURS_TO_MS = 60 * 60 * 1000
MINUTES_TO_MS = 60 * 1000
LONG_MAX = str(2**63 - 1)

COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")  # BrokerCompressionCodec order
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
CLEANUP_POLICIES = ("compact", "delete")

# MetadataVersion (server-common, 3.4) in enum order: the values message.format.version and
# inter.broker.protocol.version accept (besides release prefixes such as "2.8" and "0.10.0").
METADATA_VERSIONS = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0",
    "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0",
    "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "1.0-IV0", "1.1-IV0",
    "2.0-IV0", "2.0-IV1", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0", "2.3-IV1",
    "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1",
    "3.0-IV0", "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0",
)


@dataclass(frozen=True, slots=True)
class Validator:
    """A ConfigDef validator, by kind:

    range (min, max)      Range.atLeast / Range.between: "Value must be at least N" / "no more than N"
    in (choices)          ValidString.in: "String must be one of: a, b"
    list_in (choices)     ValidList.in: each element as ValidString (3.4: an empty list passes)
    metadata_version ()   MetadataVersionValidator: "Version X is not a valid version"
    throttled_replicas () ThrottledReplicaListValidator
    """

    kind: str
    args: tuple = ()


def at_least(n: int) -> Validator:
    return Validator("range", (n, None))


def between(lo: int, hi: int) -> Validator:
    return Validator("range", (lo, hi))


def one_of(*choices: str) -> Validator:
    return Validator("in", choices)


def list_of(*choices: str) -> Validator:
    return Validator("list_in", choices)


METADATA_VERSION = Validator("metadata_version")
THROTTLED_REPLICAS = Validator("throttled_replicas")


@dataclass(frozen=True, slots=True)
class BrokerSynonym:
    name: str
    ms_per_unit: int = 1  # the broker value times this is the topic value (hours -> ms etc.)


@dataclass(frozen=True, slots=True)
class TopicConfigDef:
    name: str
    type: str  # ConfigDef.Type: BOOLEAN STRING INT SHORT LONG DOUBLE LIST CLASS PASSWORD
    default: str | None
    validator: Validator | None
    documentation: str
    synonyms: tuple[BrokerSynonym, ...] = ()
    internal: bool = False  # defineInternal: accepted, but left out of DescribeConfigs unless overridden


def _t(name, type_, default, validator, doc, *synonyms, internal=False) -> TopicConfigDef:
    syns = tuple(s if isinstance(s, BrokerSynonym) else BrokerSynonym(s) for s in synonyms)
    return TopicConfigDef(name, type_, default, validator, doc, syns, internal)


TOPIC_CONFIGS: dict[str, TopicConfigDef] = {
    d.name: d
    for d in (
        _t("segment.bytes", "INT", "1073741824", at_least(14),  # LegacyRecord.RECORD_OVERHEAD_V0
           "Size of one segment file of the log.", "log.segment.bytes"),
        _t("segment.ms", "LONG", "604800000", at_least(1),
           "Time after which a new segment is rolled even if the current one is not full.",
           "log.roll.ms", BrokerSynonym("log.roll.hours", HOURS_TO_MS)),
        _t("segment.jitter.ms", "LONG", "0", at_least(0),
           "Largest random jitter subtracted from the scheduled segment roll time.",
           "log.roll.jitter.ms", BrokerSynonym("log.roll.jitter.hours", HOURS_TO_MS)),
        _t("segment.index.bytes", "INT", "10485760", at_least(4),
           "Size of the index that maps offsets to file positions.", "log.index.size.max.bytes"),
        _t("flush.messages", "LONG", LONG_MAX, at_least(1),
           "Number of messages written to a partition before an fsync is forced.", "log.flush.interval.messages"),
        _t("flush.ms", "LONG", LONG_MAX, at_least(0),
           "Time after which an fsync of the log is forced.",
           "log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
        _t("retention.bytes", "LONG", "-1", None,
           "Largest size a partition may reach before old segments are discarded (delete policy); -1: no limit.",
           "log.retention.bytes"),
        _t("retention.ms", "LONG", "604800000", at_least(-1),
           "Longest time a log is kept before old segments are discarded (delete policy); -1: no limit.",
           "log.retention.ms", BrokerSynonym("log.retention.minutes", MINUTES_TO_MS),
           BrokerSynonym("log.retention.hours", HOURS_TO_MS)),
        _t("max.message.bytes", "INT", "1048588", at_least(0),
           "Largest record batch size the topic accepts (after compression).", "message.max.bytes"),
        _t("index.interval.bytes", "INT", "4096", at_least(0),
           "How many bytes of log lie between two offset index entries.", "log.index.interval.bytes"),
        _t("delete.retention.ms", "LONG", "86400000", at_least(0),
           "How long delete tombstones are kept on compacted topics.", "log.cleaner.delete.retention.ms"),
        _t("min.compaction.lag.ms", "LONG", "0", at_least(0),
           "Shortest time a message stays uncompacted in the log.", "log.cleaner.min.compaction.lag.ms"),
        _t("max.compaction.lag.ms", "LONG", LONG_MAX, at_least(1),
           "Longest time a message stays ineligible for compaction.", "log.cleaner.max.compaction.lag.ms"),
        _t("file.delete.delay.ms", "LONG", "60000", at_least(0),
           "Time to wait before deleting a file from the filesystem.", "log.segment.delete.delay.ms"),
        _t("min.cleanable.dirty.ratio", "DOUBLE", "0.5", between(0, 1),
           "Dirty-to-total ratio of the log above which the cleaner compacts it.",
           "log.cleaner.min.cleanable.ratio"),
        _t("cleanup.policy", "LIST", "delete", list_of(*CLEANUP_POLICIES),
           "Retention policy for old segments: delete, compact, or both.", "log.cleanup.policy"),
        _t("unclean.leader.election.enable", "BOOLEAN", "false", None,
           "Whether a replica outside the ISR may become leader as a last resort, losing data.",
           "unclean.leader.election.enable"),
        _t("min.insync.replicas", "INT", "1", at_least(1),
           "Fewest in-sync replicas that must acknowledge a write sent with acks=all.", "min.insync.replicas"),
        _t("compression.type", "STRING", "producer", one_of(*COMPRESSION_TYPES),
           "Final compression of the topic's data; producer keeps the producer's codec.", "compression.type"),
        _t("preallocate", "BOOLEAN", "false", None,
           "Whether a new segment file is preallocated on disk.", "log.preallocate"),
        _t("message.format.version", "STRING", "3.0-IV1", METADATA_VERSION,
           "Deprecated: message format version; ignored when inter.broker.protocol.version is 3.0 or later.",
           "log.message.format.version"),
        _t("message.timestamp.type", "STRING", "CreateTime", one_of(*TIMESTAMP_TYPES),
           "Whether record timestamps are CreateTime or LogAppendTime.", "log.message.timestamp.type"),
        _t("message.timestamp.difference.max.ms", "LONG", LONG_MAX, at_least(0),
           "Largest allowed gap between the broker's receive time and a record's CreateTime.",
           "log.message.timestamp.difference.max.ms"),
        _t("leader.replication.throttled.replicas", "LIST", "", THROTTLED_REPLICAS,
           "Replicas throttled on the leader side: [PartitionId]:[BrokerId],... or '*'."),
        _t("follower.replication.throttled.replicas", "LIST", "", THROTTLED_REPLICAS,
           "Replicas throttled on the follower side: [PartitionId]:[BrokerId],... or '*'."),
        _t("message.downconversion.enable", "BOOLEAN", "true", None,
           "Whether the broker down-converts records for consumers using old fetch versions.",
           "log.message.downconversion.enable"),
        # Tiered storage (KIP-405): internal in 3.4, no broker synonyms.
        _t("remote.storage.enable", "BOOLEAN", "false", None,
           "Whether tiered storage is enabled for the topic.", internal=True),
        _t("local.retention.ms", "LONG", "-2", at_least(-2),
           "Longest time local segments are kept when tiered storage is on; -2: use retention.ms.",
           internal=True),
        _t("local.retention.bytes", "LONG", "-2", at_least(-2),
           "Largest size of local segments when tiered storage is on; -2: use retention.bytes.",
           internal=True),
    )
}

# KafkaConfig (3.4) definitions of every broker synonym above: key -> (type, default, validator).
# Types use fauxka/broker/config.py's spelling (int, long, double, bool, string, list).
BROKER_SYNONYM_DEFS: dict[str, tuple[str, str | None, Validator | None]] = {
    "log.segment.bytes": ("int", "1073741824", at_least(14)),
    "log.roll.ms": ("long", None, None),
    "log.roll.hours": ("int", "168", at_least(1)),
    "log.roll.jitter.ms": ("long", None, None),
    "log.roll.jitter.hours": ("int", "0", at_least(0)),
    "log.index.size.max.bytes": ("int", "10485760", at_least(4)),
    "log.flush.interval.messages": ("long", LONG_MAX, at_least(1)),
    "log.flush.interval.ms": ("long", None, None),
    "log.flush.scheduler.interval.ms": ("long", LONG_MAX, None),
    "log.retention.bytes": ("long", "-1", None),
    "log.retention.ms": ("long", None, None),
    "log.retention.minutes": ("int", None, None),
    "log.retention.hours": ("int", "168", None),
    "message.max.bytes": ("int", "1048588", at_least(0)),
    "log.index.interval.bytes": ("int", "4096", at_least(0)),
    "log.cleaner.delete.retention.ms": ("long", "86400000", at_least(0)),
    "log.cleaner.min.compaction.lag.ms": ("long", "0", at_least(0)),
    "log.cleaner.max.compaction.lag.ms": ("long", LONG_MAX, at_least(1)),
    "log.segment.delete.delay.ms": ("long", "60000", at_least(0)),
    "log.cleaner.min.cleanable.ratio": ("double", "0.5", between(0, 1)),
    "log.cleanup.policy": ("list", "delete", list_of(*CLEANUP_POLICIES)),
    "unclean.leader.election.enable": ("bool", "false", None),
    "min.insync.replicas": ("int", "1", at_least(1)),
    "compression.type": ("string", "producer", one_of(*COMPRESSION_TYPES)),
    "log.preallocate": ("bool", "false", None),
    "log.message.format.version": ("string", "3.0-IV1", METADATA_VERSION),
    "log.message.timestamp.type": ("string", "CreateTime", one_of(*TIMESTAMP_TYPES)),
    "log.message.timestamp.difference.max.ms": ("long", LONG_MAX, at_least(0)),
    "log.message.downconversion.enable": ("bool", "true", None),
}

BROKER_SYNONYM_KEYS: dict[str, tuple[str, str | None]] = {k: (t, d) for k, (t, d, _) in BROKER_SYNONYM_DEFS.items()}

# DynamicBrokerConfig.brokerConfigSynonyms: setting one key of a group at a higher-precedence
# level (dynamic over static) hides the others. log.flush.scheduler.interval.ms hides nothing.
BROKER_SYNONYM_GROUPS: dict[str, tuple[str, ...]] = {
    key: group
    for group in (
        ("log.roll.ms", "log.roll.hours"),
        ("log.roll.jitter.ms", "log.roll.jitter.hours"),
        ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    )
    for key in group
} | {"log.flush.interval.ms": ("log.flush.interval.ms", "log.flush.scheduler.interval.ms")}
