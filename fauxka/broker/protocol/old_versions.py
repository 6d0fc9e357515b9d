"""The api versions Kafka 3.9 serves that kio 0.6.5 lacks, each derived from the nearest kio version.

Field versions below are from Kafka 3.9.0's clients/src/main/resources/common/message/*.json
(a field "versions": "3+" is dropped from versions 0-2; "versions": "0" is added to version 0 only).
A handler reads and builds every version with the field names of the kio version named as the
base: a dropped field reads as Kafka's JSON default (e.g. `transactional_id` is None in Produce
v0-v2) and is silently left out when encoding; an added field (ListOffsets v0's
`old_style_offsets`, OffsetCommit v1's `commit_timestamp`) exists only on that version's class.
AlterPartition v0-v1 (kio starts at v2) carry `topic_name` where v2 has `topic_id` (None there).

Apis kio has no version of at all (ControlledShutdown v0-v3, v0 with request header v0) are
declared in declare.py and served by the same two functions: this module is the one place the
codec asks for a class kio lacks. `request_class`/`response_class` are what
codec.request_schema/response_schema consult; `version_range(key)` is the lowest and highest
version this project can encode for an api (kio's plus the ones here), for the api table and
ApiVersions.
"""

import datetime
import functools

from kio.index import load_request_schema, load_response_schema
from kio.schema.index import api_key_map, schema_name_map
from kio.schema.types import TopicName
from kio.static.constants import EntityType
from kio.static.primitive import i32, i64

from .declare import declared_class, declared_versions
from .derive import REQUIRED, Add, Derivation, Drop, derive

_I32_MAX = 2**31 - 1
_ZERO = datetime.timedelta(0)
_BY_NAME = (Drop("topics.topic_id", None), Add("topics.topic_name", "string", TopicName, REQUIRED, after=None))

# key -> version -> (request derivation, response derivation)
OLD: dict[int, dict[int, tuple[Derivation, Derivation]]] = {
    0: {  # Produce: TransactionalId 3+; ThrottleTimeMs 1+; LogAppendTimeMs 2+
        0: (Derivation(3, (Drop("transactional_id", None),)),
            Derivation(3, (Drop("throttle_time", _ZERO), Drop("responses.partition_responses.log_append_time", None)))),
        1: (Derivation(3, (Drop("transactional_id", None),)),
            Derivation(3, (Drop("responses.partition_responses.log_append_time", None),))),
        2: (Derivation(3, (Drop("transactional_id", None),)), Derivation(3)),
    },
    1: {  # Fetch: MaxBytes 3+, IsolationLevel 4+; ThrottleTimeMs 1+, LastStableOffset 4+, AbortedTransactions 4+
        **{v: (Derivation(4, (Drop("max_bytes", _I32_MAX), Drop("isolation_level", 0))),
               Derivation(4, (Drop("throttle_time", _ZERO),) * (v == 0) + (
                   Drop("responses.partitions.last_stable_offset", -1),
                   Drop("responses.partitions.aborted_transactions", None))))
           for v in (0, 1, 2)},
        3: (Derivation(4, (Drop("isolation_level", 0),)),
            Derivation(4, (Drop("responses.partitions.last_stable_offset", -1),
                           Drop("responses.partitions.aborted_transactions", None)))),
    },
    2: {  # ListOffsets: MaxNumOffsets 0 only; response OldStyleOffsets 0 only, Timestamp/Offset 1+
        0: (Derivation(1, (Add("topics.partitions.max_num_offsets", "int32", i32, 1, after="timestamp"),)),
            Derivation(1, (Drop("topics.partitions.timestamp", -1), Drop("topics.partitions.offset", -1),
                           Add("topics.partitions.old_style_offsets", "int64", tuple[i64, ...], (),
                               after="error_code")))),
    },
    8: {  # OffsetCommit: GenerationIdOrMemberEpoch/MemberId 1+, RetentionTimeMs 2-4, CommitTimestamp 1 only
        0: (Derivation(2, (Drop("generation_id_or_member_epoch"), Drop("member_id", ""),
                           Drop("retention_time"))),
            Derivation(2)),
        1: (Derivation(2, (Drop("retention_time"),
                           Add("topics.partitions.commit_timestamp", "int64", i64, -1, after="committed_offset"))),
            Derivation(2)),
    },
    9: {  # OffsetFetch: v0 is v1 on the wire (v0 read offsets from ZooKeeper)
        0: (Derivation(1), Derivation(1)),
    },
    23: {  # OffsetForLeaderEpoch: CurrentLeaderEpoch 2+; response LeaderEpoch 1+, ThrottleTimeMs 2+
        0: (Derivation(2, (Drop("topics.partitions.current_leader_epoch", -1),)),
            Derivation(2, (Drop("throttle_time", _ZERO), Drop("topics.partitions.leader_epoch", -1)))),
        1: (Derivation(2, (Drop("topics.partitions.current_leader_epoch", -1),)),
            Derivation(2, (Drop("throttle_time", _ZERO),))),
    },
    # the admin apis' versions below kio's, which Kafka 3.9 still serves (deprecated, KIP-896)
    19: {  # CreateTopics: ValidateOnly 1+; response ErrorMessage 1+, ThrottleTimeMs 2+
        0: (Derivation(2, (Drop("validate_only"),)),
            Derivation(2, (Drop("throttle_time", _ZERO), Drop("topics.error_message", None)))),
        1: (Derivation(2), Derivation(2, (Drop("throttle_time", _ZERO),))),
    },
    20: {0: (Derivation(1), Derivation(1, (Drop("throttle_time", _ZERO),)))},  # DeleteTopics: ThrottleTimeMs 1+
    29: {0: (Derivation(1, (Drop("pattern_type_filter"),)),  # DescribeAcls: PatternType(Filter) 1+
             Derivation(1, (Drop("resources.pattern_type"),)))},
    30: {0: (Derivation(1, (Drop("creations.resource_pattern_type"),)), Derivation(1))},  # CreateAcls
    31: {0: (Derivation(1, (Drop("filters.pattern_type_filter"),)),  # DeleteAcls
             Derivation(1, (Drop("filter_results.matching_acls.pattern_type"),)))},
    32: {  # DescribeConfigs: IncludeSynonyms 1+; response IsDefault 0 only, ConfigSource/Synonyms 1+
        0: (Derivation(1, (Drop("include_synonyms"),)),
            Derivation(1, (Drop("results.configs.config_source"), Drop("results.configs.synonyms", ()),
                           Add("results.configs.is_default", "bool", bool, False, after="read_only")))),
    },
    **{key: {0: (Derivation(1), Derivation(1))}  # the same wire format as v1 (v1: throttle before the response)
       for key in (34, 35, 38, 39, 40, 41)},  # AlterReplicaLogDirs, DescribeLogDirs, delegation tokens
    56: {  # AlterPartition (flexible 0+): TopicName 0-1, TopicId 2+; LeaderRecoveryState 1+ (KIP-704)
        **{v: (Derivation(2, _BY_NAME + (Drop("topics.partitions.leader_recovery_state", 0),) * (v == 0)),
               Derivation(2, _BY_NAME + (Drop("topics.partitions.leader_recovery_state", 0),) * (v == 0)))
           for v in (0, 1)},
    },
    27: {  # WriteTxnMarkers: v0 is v1 without flexible encoding ("flexibleVersions": "1+")
        0: (Derivation(1, flexible=False), Derivation(1, flexible=False)),
    },
}


def request_class(key: int, version: int) -> type | None:
    """The class of a request version kio lacks (derived or declared); None if kio has it or Kafka 3.9 does not."""
    return _derived(key, version, EntityType.request)


def response_class(key: int, version: int) -> type | None:
    return _derived(key, version, EntityType.response)


@functools.cache
def _derived(key: int, version: int, entity_type: EntityType) -> type | None:
    entry = OLD.get(key, {}).get(version)
    if entry is None:
        return declared_class(key, version, entity_type)
    if entity_type is EntityType.request:
        return derive(load_request_schema(key, entry[0].base), version, entry[0])
    return derive(load_response_schema(key, entry[1].base), version, entry[1])


@functools.cache
def version_range(key: int) -> tuple[int, int] | None:
    """(lowest, highest) version encodable for api `key`: kio's versions joined with the derived ones."""
    versions = set(OLD.get(key, ())) | set(declared_versions(key))
    name = api_key_map.get(key)
    if name is not None:
        versions |= set(schema_name_map[name])
    return (min(versions), max(versions)) if versions else None


def lowest_version(key: int) -> int | None:
    found = version_range(key)
    return None if found is None else found[0]
