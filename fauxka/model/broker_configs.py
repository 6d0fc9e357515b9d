"""Broker-level configs as Kafka 3.4 (ZooKeeper mode) reports and changes them.

- The catalogue: every key fauxka knows (fauxka/model/broker_keys.py's BROKER_CONFIGS that are Kafka keys,
  the broker synonyms of topic configs, and DynamicConfig.Broker's three dynamic-only keys) with
  Kafka's type, default and dynamic updatability (DynamicBrokerConfig.AllDynamicConfigs).
- `validate_dynamic_change`: DynamicBrokerConfig.validate as AlterConfigs and IncrementalAlterConfigs
  run it on a BROKER resource (ConfigAdminManager turns its failures into INVALID_REQUEST).
- `describe_broker`: the entries ConfigHelper.createBrokerConfigEntry builds for DescribeConfigs.
- `effective_dynamic`: DynamicBrokerConfig.fromPersistentProps, what a broker takes from ZooKeeper.
Keys fauxka does not know are custom configs, as in Kafka: accepted dynamically, described as
sensitive with type UNKNOWN.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from fauxka.model.broker_keys import BROKER_CONFIGS
from fauxka.model.topic_config_catalogue import (BROKER_SYNONYM_DEFS, BROKER_SYNONYM_GROUPS, LONG_MAX, TOPIC_CONFIGS, Validator,
                                     at_least)
from fauxka.model.topic_configs import (ConfigEntry, ConfigSource, ConfigSynonym, ConfigType, ConfigValidationError,
                            _ensure_valid, _merge_broker_layers, _parse, _to_string)

DEFAULT_ENTITY = "<default>"  # ConfigEntityName.Default: /config/brokers/<default>
LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)")
LISTENER_MECHANISM_CONFIGS = ("sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.login.class",
                              "sasl.server.callback.handler.class", "connections.max.reauth.ms")
# SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only with a listener prefix.
SSL_RECONFIGURABLE = ("ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
                      "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
                      "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates")
CLUSTER_LEVEL_LISTENER_CONFIGS = ("max.connections", "max.connection.creation.rate", "num.network.threads")
THREAD_POOLS = ("num.io.threads", "num.recovery.threads.per.data.dir", "num.network.threads")


@dataclass(frozen=True, slots=True)
class BrokerKey:
    name: str
    type: str  # ConfigDef.Type name, as ConfigType spells it
    default: str | None  # what DescribeConfigs reports as the DEFAULT_CONFIG value
    documentation: str
    dynamic: bool = False  # in DynamicBrokerConfig.AllDynamicConfigs (described read_only=False)
    per_broker: bool = False  # DynamicBrokerConfig.PerBrokerConfigs: not at the cluster default level
    check: Callable[[Any], str | None] | None = None  # fauxka/broker/config.py's check
    validator: Validator | None = None  # KafkaConfig's validator (synonym keys)
    kafka_config: bool = True  # a KafkaConfig key (False: DynamicConfig.Broker's own, dynamic-only)


# KafkaConfig types where fauxka's parsing differs (fauxka splits these lists; Kafka keeps strings).
_KAFKA_TYPE = {"listeners": "STRING", "advertised.listeners": "STRING", "listener.security.protocol.map": "STRING",
               "log.dirs": "STRING", "create.topic.policy.class.name": "CLASS",
               "alter.config.policy.class.name": "CLASS", "offsets.topic.replication.factor": "SHORT",
               "transaction.state.log.replication.factor": "SHORT", "log.retention.check.interval.ms": "LONG"}
_FAUXKA_TYPE = {"int": "INT", "long": "LONG", "double": "DOUBLE", "bool": "BOOLEAN", "string": "STRING",
                "list": "LIST", "password": "PASSWORD"}
_LISTENER_KEYS = ("listeners", "advertised.listeners", "listener.security.protocol.map")
THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                  "replica.alter.log.dirs.io.max.bytes.per.second")


def _default_string(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    return ",".join(value) if isinstance(value, list) else None if value is None else str(value)


def _catalogue() -> dict[str, BrokerKey]:
    # DynamicLogConfig.ReconfigurableConfigs: the first broker synonym of every topic config.
    log_dynamic = {d.synonyms[0].name for d in TOPIC_CONFIGS.values() if d.synonyms} - {"log.message.format.version"}
    docs = {s.name: d.documentation for d in TOPIC_CONFIGS.values() for s in d.synonyms}
    keys: dict[str, BrokerKey] = {}
    for key in BROKER_CONFIGS.values():
        if key.doc.startswith("fauxka:"):
            continue  # not a Kafka key: a custom config to Kafka's eyes
        # DynamicSecurityConfigs (SslConfigs.RECONFIGURABLE_CONFIGS) are dynamic and per broker
        dynamic = key.name in _LISTENER_KEYS or key.name in THREAD_POOLS or key.name in SSL_RECONFIGURABLE
        keys[key.name] = BrokerKey(key.name, _KAFKA_TYPE.get(key.name, _FAUXKA_TYPE[key.type]),
                                   _default_string(key.default), key.doc, dynamic,
                                   key.name in _LISTENER_KEYS or key.name in SSL_RECONFIGURABLE,
                                   check=key.check, validator=at_least(1) if key.name in THREAD_POOLS else None)
    for name, (type_, default, validator) in BROKER_SYNONYM_DEFS.items():
        keys[name] = BrokerKey(name, _FAUXKA_TYPE[type_], default, docs.get(name, ""), name in log_dynamic,
                               validator=validator)
    for name in THROTTLE_RATES:  # DynamicConfig.Broker's own keys: LONG, at least 0, Long.MAX_VALUE
        keys[name] = BrokerKey(name, "LONG", LONG_MAX, "Upper bound (bytes/sec) of a replication throttle; "
                               "can only be set dynamically.", validator=at_least(0),
                               kafka_config=False)
    return keys


BROKER_KEYS: dict[str, BrokerKey] = _catalogue()
# DynamicConfig.Broker.nonDynamicProps: Kafka keys that cannot be set in ZooKeeper.
NON_DYNAMIC = frozenset(k for k, key in BROKER_KEYS.items() if key.kafka_config and not key.dynamic)
# KafkaConfig.defaultValues as DynamicBrokerConfig.staticDefaultConfigs holds them (null ones dropped).
KAFKA_DEFAULTS = {k: key.default for k, key in BROKER_KEYS.items() if key.kafka_config and key.default is not None}


class BrokerConfigError(Exception):
    """DynamicBrokerConfig refused a change; ConfigAdminManager answers INVALID_REQUEST with this message."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def scala_set(names) -> str:
    return "Set(" + ", ".join(names) + ")"


def base_name(name: str) -> str:
    match = LISTENER_CONFIG.fullmatch(name)
    return match.group(1) if match else name


def broker_synonyms(name: str) -> list[str]:
    """DynamicBrokerConfig.brokerConfigSynonyms(name, matchListenerOverride = true)."""
    group = BROKER_SYNONYM_GROUPS.get(name)
    if group is not None:
        return list(group)
    match = LISTENER_CONFIG.fullmatch(name)
    if match:
        base = match.group(1)
        return [name, next((m for m in LISTENER_MECHANISM_CONFIGS if base.endswith(m)), base)]
    return [name]


def config_type(name: str) -> str | None:
    """KafkaConfig.configType: the exact key, else the first synonym with a type (listener overrides)."""
    if name in BROKER_KEYS:
        return BROKER_KEYS[name].type
    return next((BROKER_KEYS[s].type for s in broker_synonyms(name) if s in BROKER_KEYS), None)


def is_sensitive(name: str) -> bool:
    """KafkaConfig.maybeSensitive: unknown type or PASSWORD."""
    return config_type(name) in (None, "PASSWORD")


def is_list(name: str) -> bool | None:
    """For APPEND / SUBTRACT: whether the KafkaConfig key is a LIST; None when KafkaConfig has no such key."""
    key = BROKER_KEYS.get(name)
    return None if key is None or not key.kafka_config else key.type == "LIST"


def _check_value(key: BrokerKey, name: str, raw: str) -> None:
    """ConfigDef.parse of one key: type, then validator. Raises ConfigValidationError."""
    value = _parse(name, raw, key.type)
    if key.validator is not None:
        _ensure_valid(name, value, key.validator)
    if key.check is not None and not isinstance(value, list):
        complaint = key.check(value)
        if complaint:
            raise ConfigValidationError(f"Invalid value {raw} for configuration {name}: {complaint}")


def _typed_dynamic_key(name: str) -> BrokerKey | None:
    """The definition DynamicConfig.Broker.validate checks `name` (listener prefix stripped) against."""
    key = BROKER_KEYS.get(base_name(name))
    return key if key is not None and (key.dynamic or not key.kafka_config) else None


def _per_broker_names(props: Mapping[str, str]) -> list[str]:
    """DynamicBrokerConfig.perBrokerConfigs: listener, SSL and per-listener keys."""
    return [n for n in props if (n in BROKER_KEYS and BROKER_KEYS[n].per_broker) or
            (LISTENER_CONFIG.fullmatch(n) and base_name(n) not in CLUSTER_LEVEL_LISTENER_CONFIGS)]


def effective_dynamic(persisted: Mapping[str, str], per_broker: bool) -> dict[str, str]:
    """DynamicBrokerConfig.fromPersistentProps: drop what Kafka ignores (invalid values, non-dynamic keys,
    unprefixed security keys, per-broker keys at the default level)."""
    props = {}
    for name, value in persisted.items():
        key = _typed_dynamic_key(name)
        if key is not None:
            try:
                _check_value(key, name, value)
            except ConfigValidationError:
                continue
        if name in NON_DYNAMIC or name in SSL_RECONFIGURABLE:
            continue
        props[name] = value
    if not per_broker:
        for name in _per_broker_names(props):
            del props[name]
    return props


def validate_dynamic_change(props: Mapping[str, str], per_broker: bool, static: Mapping[str, str],
                            dynamic_default: Mapping[str, str], dynamic_broker: Mapping[str, str]) -> None:
    """DynamicBrokerConfig.validate(props, perBrokerConfig): `props` is the resource's whole new dynamic
    config. Raises BrokerConfigError (Kafka's ConfigException messages)."""
    fixed = [n for n in props if n in NON_DYNAMIC]
    if fixed:
        raise BrokerConfigError(f"Cannot update these configs dynamically: {scala_set(fixed)}")
    security = [n for n in SSL_RECONFIGURABLE if n in props]
    if security:
        raise BrokerConfigError("These security configs can be dynamically updated only per-listener using the "
                                f"listener prefix: {scala_set(security)}")
    for name, key in BROKER_KEYS.items():  # ConfigDef.parse: definition order
        for given in [n for n in props if base_name(n) == name and _typed_dynamic_key(n) is key]:
            try:
                _check_value(key, name, props[given])  # Kafka checks the name without listener prefix
            except ConfigValidationError as exc:
                raise BrokerConfigError(exc.message) from None
    if not per_broker:
        scoped = _per_broker_names(props)
        if scoped:
            raise BrokerConfigError("Cannot update these configs at default cluster level, broker id must be "
                                    f"specified: {scala_set(scoped)}")
    current = _merge_broker_layers(effective_dynamic(dynamic_broker, True),
                                   effective_dynamic(dynamic_default, False), static)
    if per_broker:
        new = _merge_broker_layers(props, effective_dynamic(dynamic_default, False), static)
    else:
        new = _merge_broker_layers(effective_dynamic(dynamic_broker, True), props, static)
    for name in THREAD_POOLS:  # DynamicThreadPool / DataPlaneAcceptor.validateReconfiguration
        old_value, new_value = _int_value(current, name), _int_value(new, name)
        if new_value == old_value:
            continue
        what = f"Dynamic thread count update validation failed for {name}={new_value}"
        if new_value <= 0:
            raise BrokerConfigError(f"{what}, value should be at least 1")
        if new_value < old_value // 2:
            raise BrokerConfigError(f"{what}, value should be at least half the current value {old_value}")
        if new_value > old_value * 2:
            raise BrokerConfigError(f"{what}, value should not be greater than double the current value {old_value}")


def _int_value(props: Mapping[str, str], name: str) -> int:
    try:
        return int(_parse(name, props.get(name, BROKER_KEYS[name].default), "INT"))
    except ConfigValidationError:
        return int(BROKER_KEYS[name].default)


def _value(name: str, raw: str | None) -> str | None:
    """ConfigDef.convertToString of the parsed value (the raw string when it does not parse)."""
    type_ = config_type(name)
    if raw is None or type_ is None:
        return raw
    try:
        return _to_string(_parse(name, raw, type_))
    except ConfigValidationError:
        return raw


def describe_broker(static: Mapping[str, str], dynamic_default: Mapping[str, str], dynamic_broker: Mapping[str, str],
                    per_broker: bool, include_synonyms: bool, include_documentation: bool) -> list[ConfigEntry]:
    """ConfigHelper.describeConfigs for a BROKER resource: this broker's configs (`per_broker`), or the
    cluster-wide dynamic defaults (resource name ""). Layers are the raw maps: server.properties,
    /config/brokers/<default>, /config/brokers/<id>."""
    default_layer = effective_dynamic(dynamic_default, False)
    broker_layer = effective_dynamic(dynamic_broker, True)
    if per_broker:
        names = [k for k, key in BROKER_KEYS.items() if key.kafka_config]
        names += [n for layer in (static, default_layer, broker_layer) for n in layer if n not in names]
        merged = _merge_broker_layers(broker_layer, default_layer, static)
    else:
        names, merged = list(default_layer), default_layer
    layers = ((broker_layer, ConfigSource.DYNAMIC_BROKER_CONFIG),
              (default_layer, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
              (static, ConfigSource.STATIC_BROKER_CONFIG), (KAFKA_DEFAULTS, ConfigSource.DEFAULT_CONFIG))
    entries = []
    for name in dict.fromkeys(names):
        sensitive = is_sensitive(name)
        raw = merged.get(name, KAFKA_DEFAULTS.get(name) if per_broker else None)
        value = None if sensitive else (_value(name, raw) if per_broker else raw)
        synonyms_of = broker_synonyms(name)
        found = [ConfigSynonym(s, None if sensitive else layer[s], source)
                 for layer, source in layers for s in synonyms_of if s in layer]
        while found and found[0].name != name:
            found.pop(0)
        if not per_broker:
            found = [s for s in found if s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        key = BROKER_KEYS.get(name)
        type_ = config_type(name)
        entries.append(ConfigEntry(
            name, value, found[0].source if found else ConfigSource.DEFAULT_CONFIG,
            read_only=not (key is not None and key.dynamic), sensitive=sensitive,
            config_type=ConfigType[type_] if type_ else ConfigType.UNKNOWN,
            documentation=(key.documentation if key is not None else None) if include_documentation else None,
            synonyms=found if include_synonyms else []))
    return entries


# --- BROKER_LOGGER: the broker's loggers as Log4jController shows them -------------------------------

ROOT_LOGGER = "root"
VALID_LOG_LEVELS = ("TRACE", "ERROR", "INFO", "FATAL", "DEBUG", "WARN")  # LogLevelConfig's HashSet order
_LOG4J_LEVEL = {"DEBUG": "DEBUG", "INFO": "INFO", "WARNING": "WARN", "ERROR": "ERROR"}
logger_levels: dict[str, str] = {}  # this process's levels set through IncrementalAlterConfigs


def loggers(log_level: str) -> dict[str, str]:
    """Logger name -> level. fauxka has one logger, the root one, at `log.level` unless changed."""
    return {ROOT_LOGGER: logger_levels.get(ROOT_LOGGER, _LOG4J_LEVEL.get(log_level.upper(), "INFO"))}
