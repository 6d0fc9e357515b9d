"""Topic configs as Kafka 3.4 (ZooKeeper mode) validates and reports them.

- `validate_topic_configs`: LogConfig.validate, which CreateTopics (AdminZkClient.validateTopicCreate)
  and AlterConfigs / IncrementalAlterConfigs (AdminZkClient.validateTopicConfig) run on the topic's
  override map.
- `effective_topic_configs`: the entries ConfigHelper.createTopicConfigEntry builds for
  DescribeConfigs and for the `configs` of a CreateTopics v5+ response.

The table of configs is in `fauxka.model.topic_config_catalogue`.
"""

from __future__ import annotations

import decimal
import functools
import math
import re
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Mapping

from .topic_config_catalogue import (
    BROKER_SYNONYM_DEFS,
    BROKER_SYNONYM_GROUPS,
    BROKER_SYNONYM_KEYS,
    METADATA_VERSIONS,
    TOPIC_CONFIGS,
    TopicConfigDef,
    Validator,
)

__all__ = [
    "BROKER_SYNONYM_KEYS", "TOPIC_CONFIGS", "TopicConfigDef", "ConfigSource", "ConfigType",
    "ConfigValidationError", "ConfigEntry", "ConfigSynonym", "validate_topic_configs",
    "validate_broker_synonym", "effective_topic_configs",
]


class ConfigSource(IntEnum):  # DescribeConfigsResponse.ConfigSource
    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6


class ConfigType(IntEnum):  # DescribeConfigsResponse.ConfigType (v3+)
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigValidationError(Exception):
    """A rejected config. `config_exception` tells Kafka's two exception kinds apart:
    True  - ConfigException (a bad value): AlterConfigs prefixes the message with
            "Invalid config value for resource ConfigResource(type=TOPIC, name='t'): ";
    False - InvalidConfigurationException (unknown name, conflicting values): message as is.
    Both are INVALID_CONFIG (40) on the wire."""

    def __init__(self, message: str, config_exception: bool = True):
        super().__init__(message)
        self.message = message
        self.config_exception = config_exception


@dataclass
class ConfigSynonym:
    name: str
    value: str | None
    source: int


@dataclass
class ConfigEntry:
    name: str
    value: str | None
    source: int
    read_only: bool
    sensitive: bool
    config_type: int
    documentation: str | None
    synonyms: list[ConfigSynonym] = field(default_factory=list)


# ---- Java parsing and printing (ConfigDef.parseType / convertToString) ----

_BROKER_TYPES = {"int": "INT", "long": "LONG", "double": "DOUBLE", "bool": "BOOLEAN", "string": "STRING",
                 "list": "LIST"}
_INT_BITS = {"SHORT": 16, "INT": 32, "LONG": 64}
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)")
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?")
_LIST_SEP = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")  # Java's \s*,\s*
_REPLICA = re.compile(r"(?:[0-9]+:[0-9]+)?")
_THROTTLED_MSG = ("{} must be the literal '*' or a list of replicas in the following format: "
                  "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


def _jtrim(s: str) -> str:
    """String.trim(): strips code points <= U+0020 only."""
    i, j = 0, len(s)
    while i < j and s[i] <= " ":
        i += 1
    while j > i and s[j - 1] <= " ":
        j -= 1
    return s[i:j]


def _invalid(name: str, value: Any, message: str) -> ConfigValidationError:
    return ConfigValidationError(f"Invalid value {value} for configuration {name}: {message}")


def _java_double(x: float) -> str:
    """Double.toString."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        return repr(x)  # positional in this range, always with a fraction
    sign, digits, exp = decimal.Decimal(repr(x)).as_tuple()
    ds = "".join(map(str, digits))
    e = len(ds) + exp - 1
    ds = ds.rstrip("0") or "0"
    return f"{'-' if sign else ''}{ds[0]}.{ds[1:] or '0'}E{e}"


def _java_str(value: Any) -> str:
    """Object.toString of a parsed value (as ConfigException prints it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


def _to_string(value: Any) -> str:
    """ConfigDef.convertToString: what DescribeConfigs reports for a parsed value."""
    return ",".join(value) if isinstance(value, list) else _java_str(value)


def _parse(name: str, raw: str, type_: str) -> Any:
    trimmed = _jtrim(raw)
    if type_ == "BOOLEAN":
        if trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true"
        raise _invalid(name, raw, "Expected value to be either true or false")
    if type_ in _INT_BITS:
        bits = _INT_BITS[type_]
        if _INTEGER.fullmatch(trimmed) and -(2 ** (bits - 1)) <= int(trimmed) < 2 ** (bits - 1):
            return int(trimmed)
        raise _invalid(name, raw, f"Not a number of type {type_}")
    if type_ == "DOUBLE":
        if _DECIMAL.fullmatch(trimmed):
            return float(trimmed[:-1] if trimmed[-1] in "fFdD" else trimmed)
        if _HEX_FLOAT.fullmatch(trimmed):
            return float.fromhex(trimmed[:-1] if trimmed[-1] in "fFdD" else trimmed)
        raise _invalid(name, raw, "Not a number of type DOUBLE")
    if type_ == "LIST":
        return _LIST_SEP.split(trimmed) if trimmed else []
    return trimmed  # STRING, PASSWORD, CLASS (not loaded)


def _metadata_version(version: str) -> int | None:
    """MetadataVersion.fromVersionString -> index into METADATA_VERSIONS, or None."""
    segments = version.split(".")
    while len(segments) > 1 and segments[-1] == "":  # Java's split drops trailing empty strings
        segments.pop()
    wanted = 3 if version.startswith("0.") else 2
    key = version if wanted >= len(segments) else ".".join(segments[:wanted])
    if key in METADATA_VERSIONS:
        return METADATA_VERSIONS.index(key)
    releases = [i for i, v in enumerate(METADATA_VERSIONS) if v.split("-")[0] == key]
    return releases[-1] if releases else None


def _ensure_valid(name: str, value: Any, validator: Validator | None) -> None:
    if validator is None:
        return
    kind, args = validator.kind, validator.args
    if kind == "range":
        low, high = args
        if low is not None and value < low:
            raise _invalid(name, _java_str(value), f"Value must be at least {low}")
        if high is not None and value > high:
            raise _invalid(name, _java_str(value), f"Value must be no more than {high}")
    elif kind in ("in", "list_in"):
        for item in value if kind == "list_in" else [value]:
            if item not in args:
                raise _invalid(name, item, "String must be one of: " + ", ".join(args))
    elif kind == "metadata_version":
        if _metadata_version(value) is None:
            raise _invalid(name, value, f"Version {value} is not a valid version")
    elif kind == "throttled_replicas":
        if not (all(_REPLICA.fullmatch(_jtrim(v)) for v in value) or _jtrim("".join(value)) == "*"):
            raise _invalid(name, _java_str(value), _THROTTLED_MSG.format(name))


def _parse_valid(d: TopicConfigDef, raw: str) -> Any:
    value = _parse(d.name, raw, d.type)
    _ensure_valid(d.name, value, d.validator)
    return value


# ---- validation ----

def validate_topic_configs(configs: Mapping[str, str]) -> None:
    """LogConfig.validate (3.4): names first, then every value in definition order (absent ones take
    their defaults), then min.compaction.lag.ms <= max.compaction.lag.ms. Values must not be None."""
    _validate_frozen(tuple(configs.items()))


@functools.lru_cache(maxsize=256)  # a pure function, asked the same question on every request
def _validate_frozen(items: tuple[tuple[str, str], ...]) -> None:
    configs = dict(items)
    for name in configs:
        if name not in TOPIC_CONFIGS:
            raise ConfigValidationError(f"Unknown topic config name: {name}", config_exception=False)
    parsed = {d.name: _parse_valid(d, configs.get(d.name, d.default or "")) for d in TOPIC_CONFIGS.values()}
    low, high = parsed["min.compaction.lag.ms"], parsed["max.compaction.lag.ms"]
    if low > high:
        raise ConfigValidationError(
            f"conflict topic config setting min.compaction.lag.ms ({low}) > max.compaction.lag.ms ({high})",
            config_exception=False)


def validate_broker_synonym(key: str, value: str) -> Any:
    """Parse and check a broker-level synonym (KafkaConfig's type and validator); returns the value."""
    type_, _, validator = BROKER_SYNONYM_DEFS[key]
    parsed = _parse(key, value, _BROKER_TYPES[type_])
    _ensure_valid(key, parsed, validator)
    return parsed


# ---- effective values ----

def _merge_broker_layers(dynamic, dynamic_default, static) -> dict[str, str]:
    """DynamicBrokerConfig.updateCurrentConfig: static, overridden by the cluster default, overridden by
    the per-broker config; a key set at a higher level hides its synonyms from lower levels.
    Within one level the first synonym (e.g. log.retention.ms over log.retention.hours) wins."""
    props = dict(static)
    for layer in (dynamic_default, dynamic):
        order = sorted(layer, key=lambda k: -BROKER_SYNONYM_GROUPS.get(k, (k,)).index(k))
        for key in order:
            for synonym in BROKER_SYNONYM_GROUPS.get(key, (key,)):
                props.pop(synonym, None)
            props[key] = layer[key]
    return props


def _from_broker(d: TopicConfigDef, props: Mapping[str, str]) -> Any:
    """The value KafkaConfig hands LogConfig (extractLogConfigMap): the first synonym that is set or
    has a default, converted to the topic's unit."""
    if d.name == "message.format.version":
        # KafkaConfig.logMessageFormatVersion: ignored (3.0-IV1) when the IBP is 3.0-IV1 or later.
        ibp = _metadata_version(_jtrim(props.get("inter.broker.protocol.version", METADATA_VERSIONS[-1])))
        if ibp is None or ibp >= METADATA_VERSIONS.index("3.0-IV1"):
            return "3.0-IV1"
        return METADATA_VERSIONS[_metadata_version(validate_broker_synonym(
            "log.message.format.version", props.get("log.message.format.version", "3.0-IV1")))]
    for synonym in d.synonyms:
        raw = props.get(synonym.name, BROKER_SYNONYM_KEYS[synonym.name][1])
        if raw is None:
            continue
        value = validate_broker_synonym(synonym.name, raw)
        if synonym.ms_per_unit != 1:
            value *= synonym.ms_per_unit
        if d.name == "retention.ms" and value < 0:  # KafkaConfig.logRetentionTimeMillis
            value = -1
        return value
    return _parse(d.name, d.default or "", d.type)


def _check_remote_log_config(values: Mapping[str, Any]) -> None:
    """LogConfig.RemoteLogConfig (3.4), run when a LogConfig is built (not by validate)."""
    for local, total in (("local.retention.ms", "retention.ms"), ("local.retention.bytes", "retention.bytes")):
        lv, tv = values[local], values[total]
        if lv == -2:
            continue
        if lv == -1 and tv != -1:
            raise _invalid(local, lv, f"Value must not be -1 as {total} value is set as {tv}.")
        if lv > tv:
            raise _invalid(local, lv, f"Value must not be more than property: {total} value.")


def _broker_synonyms(d: TopicConfigDef, layers) -> list[ConfigSynonym]:
    """ConfigHelper.configSynonyms: per level (dynamic broker, dynamic default, static, Kafka default),
    the synonyms set there in synonym order; then everything before the first entry named after the
    first synonym is dropped. So with only log.retention.hours set, retention.ms has no synonyms and
    reports DEFAULT_CONFIG although its value comes from log.retention.hours."""
    if not d.synonyms:
        return []
    names = [s.name for s in d.synonyms]
    found = [ConfigSynonym(n, layer[n], source) for layer, source in layers for n in names if n in layer]
    while found and found[0].name != names[0]:
        found.pop(0)
    return found


def effective_topic_configs(
    overrides: Mapping[str, str],
    broker_dynamic: Mapping[str, str],
    broker_dynamic_default: Mapping[str, str],
    broker_static: Mapping[str, str],
    include_synonyms: bool,
    include_documentation: bool = False,
) -> list[ConfigEntry]:
    """The entries ConfigHelper.createTopicConfigEntry reports for a topic with `overrides` (its
    /config/topics znode) on a broker with the given per-broker dynamic, cluster-default dynamic and
    server.properties configs. Order: the catalogue's, then unknown override names (Kafka's order is
    a hash map's). Internal configs appear only when overridden. Raises ConfigValidationError where
    building Kafka's LogConfig throws (a bad value, or local.retention.* beyond retention.*)."""
    return list(_effective_frozen(tuple(overrides.items()), tuple(broker_dynamic.items()),
                                  tuple(broker_dynamic_default.items()), tuple(broker_static.items()),
                                  include_synonyms, include_documentation))


# Pure, and asked the same question on every CreateTopics and DescribeConfigs: memoized on the
# inputs' items (insertion order kept: unknown override names are reported in that order).
# The entries are shared between callers, which only read them.
@functools.lru_cache(maxsize=256)
def _effective_frozen(overrides_items, dynamic_items, dynamic_default_items, static_items,
                      include_synonyms: bool, include_documentation: bool) -> tuple[ConfigEntry, ...]:
    overrides, broker_dynamic = dict(overrides_items), dict(dynamic_items)
    broker_dynamic_default, broker_static = dict(dynamic_default_items), dict(static_items)
    props = _merge_broker_layers(broker_dynamic, broker_dynamic_default, broker_static)
    values = {
        d.name: _parse_valid(d, overrides[d.name]) if d.name in overrides else _from_broker(d, props)
        for d in TOPIC_CONFIGS.values()
    }
    for d in TOPIC_CONFIGS.values():
        _ensure_valid(d.name, values[d.name], d.validator)
    _check_remote_log_config(values)

    kafka_defaults = {k: v for k, (_, v) in BROKER_SYNONYM_KEYS.items() if v is not None}
    layers = (
        (broker_dynamic, ConfigSource.DYNAMIC_BROKER_CONFIG),
        (broker_dynamic_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        (broker_static, ConfigSource.STATIC_BROKER_CONFIG),
        (kafka_defaults, ConfigSource.DEFAULT_CONFIG),
    )
    entries = []
    for d in TOPIC_CONFIGS.values():
        if d.internal and d.name not in overrides:
            continue
        sensitive = d.type == "PASSWORD"
        if sensitive:
            value = None
        elif d.internal:
            value = overrides[d.name]  # AbstractConfig.originals: the unparsed override
        else:
            value = _to_string(values[d.name])
        synonyms = _broker_synonyms(d, layers)
        if sensitive:
            synonyms = [ConfigSynonym(s.name, None, s.source) for s in synonyms]
        if d.name in overrides:
            synonyms.insert(0, ConfigSynonym(d.name, value, ConfigSource.DYNAMIC_TOPIC_CONFIG))
        entries.append(ConfigEntry(
            d.name, value, synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG, False, sensitive,
            ConfigType[d.type], d.documentation if include_documentation else None,
            synonyms if include_synonyms else []))
    for name in overrides:
        if name not in TOPIC_CONFIGS:  # unknown type: KafkaConfig.maybeSensitive treats it as sensitive
            synonyms = [ConfigSynonym(name, None, ConfigSource.DYNAMIC_TOPIC_CONFIG)] if include_synonyms else []
            entries.append(ConfigEntry(name, None, ConfigSource.DYNAMIC_TOPIC_CONFIG, False, True,
                                       ConfigType.UNKNOWN, None, synonyms))
    return tuple(entries)
