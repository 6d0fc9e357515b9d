"""Broker properties from `KAFKA_*` environment variables, as Confluent's cp-kafka image reads them.

cp-kafka (ZooKeeper mode) turns every `KAFKA_*` variable into a `server.properties` line: the
prefix dropped, the rest lower-cased, a single `_` becoming `.`, `__` a literal `_` and `___` a
`-` (confluent-docker-utils' env-to-props). So `KAFKA_AUTO_CREATE_TOPICS_ENABLE=true` is
`auto.create.topics.enable=true` and `KAFKA_LISTENER_NAME_CLIENT_SCRAM___SHA___256_SASL_JAAS_CONFIG`
is `listener.name.client.scram-sha-256.sasl.jaas.config`. Variables that configure the JVM or
log4j, not the broker, are not properties there (cp-kafka's exclusion list) and are ignored here;
`KAFKA_LOG4J_ROOT_LOGLEVEL` sets fauxka's `log.level`. When `KAFKA_LISTENERS` is unset, cp-kafka
listens on every advertised listener's port on all interfaces (its `cub listeners`); so does this.

Where Kafka only warns about a property it does not know, a variable naming no broker property
fauxka knows is refused, naming the variable: a typo in a compose file fails at start-up instead
of being silently ignored."""

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from fauxka.model.broker_keys import BROKER_CONFIGS, PASSTHROUGH_PREFIXES
from fauxka.model.topic_configs import BROKER_SYNONYM_KEYS

PREFIX = "KAFKA_"

# cp-kafka's excluded variables (they configure the JVM, log4j or the tools, not the broker), and
# the two kafka-run-class.sh reads for JMX.
NOT_PROPERTIES = frozenset({
    "KAFKA_VERSION", "KAFKA_HEAP_OPTS", "KAFKA_LOG4J_OPTS", "KAFKA_OPTS", "KAFKA_JMX_OPTS",
    "KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_GC_LOG_OPTS", "KAFKA_LOG4J_LOGGERS",
    "KAFKA_TOOLS_LOG4J_LOGLEVEL", "KAFKA_ZOOKEEPER_CLIENT_CNXN_SOCKET", "KAFKA_JMX_PORT",
    "KAFKA_JMX_HOSTNAME",
})
LOG_LEVEL_VARIABLE = "KAFKA_LOG4J_ROOT_LOGLEVEL"
_LOG4J_LEVELS = {"TRACE": "DEBUG", "DEBUG": "DEBUG", "INFO": "INFO", "WARN": "WARNING",
                 "WARNING": "WARNING", "ERROR": "ERROR", "FATAL": "ERROR"}
_UNDERSCORES = re.compile(r"_+")
_SEPARATORS = {1: ".", 2: "_", 3: "-"}
_ADVERTISED_HOST = re.compile(r"^([A-Za-z0-9_]+)://(\[[^\]]*\]|[^:]*):(\d+)$")


class EnvConfigError(Exception):
    """A `KAFKA_*` variable that names no broker property, or a value that cannot be one."""


@dataclass
class EnvConfig:
    properties: dict[str, str]  # property name -> value, as a server.properties file would give them
    ignored: list[str] = field(default_factory=list)  # the JVM/log4j variables that were set
    sources: dict[str, str] = field(default_factory=dict)  # property name -> the variable it came from


def property_name(variable: str) -> str:
    """`KAFKA_LOG_DIRS` -> `log.dirs`; `__` is a literal `_`, `___` a `-`. EnvConfigError for a
    run of four or more underscores, which the mapping gives no meaning."""
    rest = variable[len(PREFIX):] if variable.startswith(PREFIX) else variable

    def separator(match: re.Match) -> str:
        try:
            return _SEPARATORS[len(match.group())]
        except KeyError:
            raise EnvConfigError(f"{variable}: a run of {len(match.group())} underscores has no meaning "
                                 "(_ is '.', __ is '_', ___ is '-')") from None

    return _UNDERSCORES.sub(separator, rest.lower())


def variable_name(prop: str) -> str:
    """The inverse: `log.dirs` -> `KAFKA_LOG_DIRS`."""
    return PREFIX + prop.replace("_", "__").replace("-", "___").replace(".", "_").upper()


def is_known(prop: str) -> bool:
    return prop in BROKER_CONFIGS or prop in BROKER_SYNONYM_KEYS or prop.startswith(PASSTHROUGH_PREFIXES)


def honoured_properties() -> list[str]:
    """Every property a `KAFKA_*` variable may name exactly (plus the passthrough families)."""
    return sorted(set(BROKER_CONFIGS) | set(BROKER_SYNONYM_KEYS))


def from_environment(environ: Mapping[str, str]) -> EnvConfig:
    """The broker properties the `KAFKA_*` variables of `environ` give; EnvConfigError naming the
    first variable (in sorted order) that names no property fauxka knows."""
    config = EnvConfig({})
    for variable in sorted(v for v in environ if v.startswith(PREFIX)):
        value = environ[variable]
        if variable in NOT_PROPERTIES:
            config.ignored.append(variable)
            continue
        if variable == LOG_LEVEL_VARIABLE:
            level = _LOG4J_LEVELS.get(value.strip().upper())
            if level is None:
                raise EnvConfigError(f"{variable}={value}: expected one of {', '.join(_LOG4J_LEVELS)}")
            config.properties["log.level"] = level
            config.sources["log.level"] = variable
            continue
        prop = property_name(variable)
        if not is_known(prop):
            raise EnvConfigError(_unknown(variable, prop))
        config.properties[prop] = value
        config.sources[prop] = variable
    if "listeners" not in config.properties and "advertised.listeners" in config.properties:
        config.properties["listeners"] = _listen_on_all(config.properties["advertised.listeners"])
        config.sources["listeners"] = "KAFKA_ADVERTISED_LISTENERS"
    return config


def _unknown(variable: str, prop: str) -> str:
    close = difflib.get_close_matches(prop, honoured_properties(), n=1, cutoff=0.8)
    hint = f"; did you mean {variable_name(close[0])} ({close[0]})?" if close else ""
    return (f"{variable} names the broker property {prop}, which fauxka does not know{hint} "
            "(KAFKA_ variables name broker properties: prefix dropped, _ is '.', __ is '_', ___ is '-')")


def _listen_on_all(advertised: str) -> str:
    """cp-kafka's `cub listeners`: each advertised listener, bound on all interfaces."""
    listeners = []
    for item in (part.strip() for part in advertised.split(",")):
        if not item:
            continue
        match = _ADVERTISED_HOST.match(item)
        if not match:
            raise EnvConfigError(f"KAFKA_ADVERTISED_LISTENERS: {item!r} is not NAME://host:port")
        listeners.append(f"{match.group(1)}://0.0.0.0:{match.group(3)}")
    return ",".join(listeners)
