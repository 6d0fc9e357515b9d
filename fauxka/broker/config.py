"""Broker configuration: a server.properties file read against the key catalogue.

`BROKER_CONFIGS` (fauxka/model/broker_keys.py) is the catalogue; `load_config` parses a file plus
`--override key=value` pairs, warns about unknown keys and turns a bad value
into a ConfigError that names the key.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fauxka.model.broker_keys import BROKER_CONFIGS, PASSTHROUGH_PREFIXES, ConfigKey
from fauxka.model.topic_configs import BROKER_SYNONYM_KEYS, ConfigValidationError, validate_broker_synonym

from .auth.sasl_config import SaslConfigError, load as load_sasl
from .properties import parse_properties
from .tls.settings import TlsConfigError, load as load_tls


class ConfigError(Exception):
    pass


_LISTENER = re.compile(r"^([A-Za-z0-9_]+)://(\[[0-9a-fA-F:.]+\]|[^:\[\]]*):(\d+)$")


@dataclass(frozen=True, slots=True)
class Endpoint:
    listener: str
    host: str
    port: int
    security_protocol: str

    def uri(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener}://{host}:{self.port}"


class BrokerConfig:
    """Parsed, validated broker configuration."""

    def __init__(self, values: dict[str, Any], unknown: dict[str, str], originals: dict[str, str]):
        self._values = values
        self.unknown = unknown
        self.originals = originals  # every key as written: what plugins' configure() receives
        self.protocol_map = _protocol_map(values["listener.security.protocol.map"])
        self.listeners = _endpoints("listeners", values["listeners"], self.protocol_map)
        advertised = values["advertised.listeners"]
        self.advertised = (
            _endpoints("advertised.listeners", advertised, self.protocol_map) if advertised else self.listeners
        )
        for ep in self.advertised:
            if ep.host in ("0.0.0.0", "::"):
                raise ConfigError(
                    f"Invalid value {ep.uri()} for configuration advertised.listeners: "
                    "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0."
                )
        self.inter_broker_listener = _inter_broker_listener(values["inter.broker.listener.name"], self.listeners)
        try:
            self.sasl = load_sasl(self)  # SASL listeners' mechanisms and JAAS entries, inter-broker credentials
        except SaslConfigError as exc:
            raise ConfigError(str(exc)) from None
        try:
            self.tls = load_tls(self)  # TLS listeners' server contexts, the inter-broker client context
        except TlsConfigError as exc:
            raise ConfigError(str(exc)) from None

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    @property
    def broker_id(self) -> int:
        return self._values["broker.id"]

    @property
    def inter_broker_ssl(self):
        """The client SSL context for the inter-broker listener (None when it is not SSL / SASL_SSL)."""
        return self.tls.inter_broker

    def inter_broker_credentials(self) -> tuple[str, str, str] | None:
        """(mechanism, username, password) this broker authenticates with on the inter-broker listener,
        or None when that listener is PLAINTEXT."""
        return self.sasl.inter_broker

    def sasl_listener(self, listener: str):
        """The SASL settings (mechanisms, JAAS entries) of a SASL_* listener; None on any other."""
        return self.sasl.listeners.get(listener)

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def with_broker_id(self, broker_id: int) -> "BrokerConfig":
        """This configuration with the id found or generated for broker.id -1 (fauxka/broker/registration.py)."""
        return BrokerConfig({**self._values, "broker.id": broker_id}, self.unknown, self.originals)


def load_config(path: str | Path | None, overrides: list[str] = ()) -> BrokerConfig:
    raw = parse_properties(Path(path).read_text()) if path else {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--override expects key=value, got {item!r}")
        raw[key.strip()] = value.strip()
    return config_from_dict(raw)


def config_from_dict(raw: dict[str, str]) -> BrokerConfig:
    values: dict[str, Any] = {}
    unknown = {k: v for k, v in raw.items()
               if k not in BROKER_CONFIGS and k not in BROKER_SYNONYM_KEYS and not k.startswith(PASSTHROUGH_PREFIXES)}
    for name in raw.keys() & BROKER_SYNONYM_KEYS.keys():  # topic defaults: checked here, used by the controller
        try:
            validate_broker_synonym(name, raw[name])
        except ConfigValidationError as exc:
            raise ConfigError(exc.message) from None
    for name, key in BROKER_CONFIGS.items():
        if name in raw:
            values[name] = _convert(key, raw[name])
        else:
            values[name] = key.default
    if values["zookeeper.connect"] in (None, ""):
        raise ConfigError("Missing required configuration \"zookeeper.connect\" which has no default value.")
    if not -1 <= values["broker.id"] <= values["reserved.broker.max.id"]:  # KafkaConfig.validateValues
        raise ConfigError("broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id")
    if not values["log.dirs"]:
        values["log.dirs"] = [values["log.dir"]]
    if values["zookeeper.connection.timeout.ms"] is None:
        values["zookeeper.connection.timeout.ms"] = values["zookeeper.session.timeout.ms"]
    return BrokerConfig(values, unknown, dict(raw))


def _convert(key: ConfigKey, text: str) -> Any:
    text = text.strip()
    try:
        if key.type == "int":
            value: Any = int(text)
        elif key.type == "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError("Expected value to be either true or false")
            value = text.lower() == "true"
        elif key.type == "list":
            value = [item.strip() for item in text.split(",") if item.strip()]
        else:
            value = text or None
    except ValueError as exc:
        detail = str(exc) if key.type == "bool" else f"Not a number of type {key.type.upper()}"
        raise ConfigError(f"Invalid value {text} for configuration {key.name}: {detail}") from None
    if key.check is not None and value is not None:
        complaint = key.check(value)
        if complaint:
            raise ConfigError(f"Invalid value {text} for configuration {key.name}: {complaint}")
    return value


def _protocol_map(items: list[str]) -> dict[str, str]:
    mapping = {}
    for item in items:
        name, sep, protocol = item.partition(":")
        if not sep or not name or not protocol:
            raise ConfigError(
                f"Invalid value {item} for configuration listener.security.protocol.map: "
                "expected NAME:SECURITY_PROTOCOL"
            )
        mapping[name.strip().upper()] = protocol.strip().upper()
    return mapping


def _endpoints(key: str, items: list[str], protocol_map: dict[str, str]) -> list[Endpoint]:
    endpoints: list[Endpoint] = []
    for item in items:
        match = _LISTENER.match(item)
        if not match:
            raise ConfigError(f"Invalid value {item} for configuration {key}: expected NAME://host:port")
        name, host, port = match.group(1).upper(), match.group(2).strip("[]"), int(match.group(3))
        if not 0 <= port <= 65535:
            raise ConfigError(f"Invalid value {item} for configuration {key}: port out of range")
        if name not in protocol_map:
            raise ConfigError(
                f"Invalid value {item} for configuration {key}: "
                f"No security protocol defined for listener {name}"
            )
        if any(ep.listener == name for ep in endpoints):
            raise ConfigError(f"Invalid value {','.join(items)} for configuration {key}: "
                              f"Each listener must have a different name, {name} appears more than once")
        endpoints.append(Endpoint(name, host, port, protocol_map[name]))
    if not endpoints:
        raise ConfigError(f"Invalid value for configuration {key}: at least one listener is needed")
    return endpoints


def _inter_broker_listener(name: str | None, listeners: list[Endpoint]) -> str:
    names = [ep.listener for ep in listeners]
    if name:
        name = name.upper()
        if name not in names:
            raise ConfigError(
                f"Invalid value {name} for configuration inter.broker.listener.name: "
                f"inter.broker.listener.name must be a listener name defined in listeners ({', '.join(names)})"
            )
        return name
    plaintext = [ep.listener for ep in listeners if ep.security_protocol == "PLAINTEXT"]
    if not plaintext:
        raise ConfigError("inter.broker.listener.name is not set and no listener uses PLAINTEXT (name the listener "
                          "brokers use between each other, e.g. inter.broker.listener.name=SSL)")
    return plaintext[0]


def internal_topic_spec(config: BrokerConfig, live_brokers: int, partitions_key: str, replication_key: str,
                        configs) -> tuple[int, int, dict[str, str]]:
    """(partitions, replication factor, configs(replication)) of an internal topic created on first
    need, its replication factor capped by the live brokers (Kafka refuses until enough are alive)."""
    replication = min(config[replication_key], max(live_brokers, 1))
    return config[partitions_key], replication, configs(replication)
