"""The SASL settings of a broker's SASL_PLAINTEXT and SASL_SSL listeners, read from Kafka's keys and checked at start-up.

- `sasl.enabled.mechanisms` (or `listener.name.<listener>.sasl.enabled.mechanisms`): PLAIN,
  SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER with Kafka's default unsecured JWT validator
  (fauxka/broker/auth/oauthbearer.py; a `sasl.server.callback.handler.class` for it is refused)
  (Kafka's default, GSSAPI, is refused: no Kerberos here);
- `listener.name.<listener>.<mechanism>.sasl.jaas.config` (listener and mechanism in lower case,
  as Kafka looks them up): one login module per SASL listener and enabled mechanism; PLAIN's
  `user_<name>="<password>"` options are the PLAIN users, `username`/`password` the broker's own
  credentials on the inter-broker listener;
- `sasl.mechanism.inter.broker.protocol`: the mechanism brokers use between each other.
"""

import re
from dataclasses import dataclass

from .jaas import PLAIN_MODULE, SCRAM_MODULE, JaasEntry, JaasError, server_entry
from .oauthbearer import OAUTHBEARER_MODULE


class SaslConfigError(ValueError):
    """A bad SASL setting; broker.config turns it into its ConfigError (naming the key)."""


SUPPORTED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
LOGIN_MODULES = (PLAIN_MODULE, SCRAM_MODULE, OAUTHBEARER_MODULE)
SUPPORTED_PROTOCOLS = ("PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL")
SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
JAAS_KEY = re.compile(r"listener\.name\.([^.]+)\.([^.]+)\.sasl\.jaas\.config")


@dataclass(frozen=True)
class ListenerSasl:
    listener: str
    mechanisms: tuple[str, ...]
    entries: dict[str, JaasEntry]  # mechanism -> its login module

    def plain_password(self, user: str) -> str | None:
        """PlainServerCallbackHandler: the `user_<name>` option of the PlainLoginModule entry."""
        entry = self.entries.get("PLAIN")
        if entry is None or entry.login_module != PLAIN_MODULE:
            return None
        return entry.options.get(f"user_{user}")


@dataclass(frozen=True)
class SaslSettings:
    listeners: dict[str, ListenerSasl]  # SASL listeners by name
    inter_broker: tuple[str, str, str] | None  # (mechanism, username, password) when inter-broker uses SASL


def jaas_key(listener: str, mechanism: str) -> str:
    return f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"


def load(config) -> SaslSettings:
    """The SASL settings of `config` (a BrokerConfig); SaslConfigError names the offending key."""
    originals = config.originals
    entries: dict[str, JaasEntry] = {}
    for key, text in originals.items():
        if JAAS_KEY.fullmatch(key):
            try:
                entry = server_entry(text)
            except JaasError as exc:
                raise SaslConfigError(f"Invalid value for configuration {key}: {exc}") from None
            if entry.login_module not in LOGIN_MODULES:
                raise SaslConfigError(f"Invalid value for configuration {key}: login module {entry.login_module} is "
                                  f"not supported by fauxka (use {', '.join(LOGIN_MODULES)})")
            entries[key] = entry
    listeners = {}
    for ep in config.listeners:
        if ep.security_protocol not in SUPPORTED_PROTOCOLS:
            raise SaslConfigError(f"Invalid value {ep.uri()} for configuration listeners: security protocol "
                              f"{ep.security_protocol} is not supported by fauxka ({', '.join(SUPPORTED_PROTOCOLS)})")
        if ep.security_protocol in SASL_PROTOCOLS:
            listeners[ep.listener] = _listener(config, ep.listener, entries)
    return SaslSettings(listeners, _inter_broker(config, listeners))


def _listener(config, listener: str, entries: dict[str, JaasEntry]) -> ListenerSasl:
    key = f"listener.name.{listener.lower()}.sasl.enabled.mechanisms"
    if key in config.originals:
        mechanisms = [m.strip() for m in config.originals[key].split(",") if m.strip()]
    else:
        key, mechanisms = "sasl.enabled.mechanisms", config["sasl.enabled.mechanisms"]
    if not mechanisms:
        raise SaslConfigError(f"Invalid value for configuration {key}: SASL listener {listener} needs at least one "
                          "mechanism")
    for mechanism in mechanisms:
        if mechanism not in SUPPORTED_MECHANISMS:
            unset = "" if key in config.originals else " (Kafka's default, used as sasl.enabled.mechanisms is not set)"
            raise SaslConfigError(f"Invalid value {','.join(mechanisms)} for configuration {key}{unset}: SASL mechanism "
                              f"{mechanism} is not supported by fauxka ({', '.join(SUPPORTED_MECHANISMS)})")
    found = {}
    for mechanism in mechanisms:
        jaas = jaas_key(listener, mechanism)
        if jaas not in entries:
            raise SaslConfigError(f"Missing configuration {jaas}: Could not find a 'KafkaServer' or "
                              f"'{listener.lower()}.KafkaServer' entry in the JAAS configuration. System property "
                              "'java.security.auth.login.config' is not set")
        found[mechanism] = entries[jaas]
    handler = f"listener.name.{listener.lower()}.oauthbearer.sasl.server.callback.handler.class"
    if "OAUTHBEARER" in mechanisms and config.originals.get(handler, "").strip():
        raise SaslConfigError(f"Invalid value {config.originals[handler]} for configuration {handler}: fauxka "
                              "validates OAUTHBEARER tokens only as Kafka's default, the unsecured JWT validator "
                              "(leave it unset)")
    return ListenerSasl(listener, tuple(dict.fromkeys(mechanisms)), found)


def _inter_broker(config, listeners: dict[str, ListenerSasl]) -> tuple[str, str, str] | None:
    settings = listeners.get(config.inter_broker_listener)
    if settings is None:
        return None
    mechanism = config["sasl.mechanism.inter.broker.protocol"]
    if mechanism not in settings.mechanisms:
        raise SaslConfigError("sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms "
                          "when SASL is used for inter-broker communication")
    options = settings.entries[mechanism].options
    if not options.get("username") or "password" not in options:
        raise SaslConfigError(f"Invalid value for configuration {jaas_key(settings.listener, mechanism)}: the "
                          "inter-broker listener's login module needs username and password options (the broker's "
                          "own credentials)")
    return mechanism, options["username"], options["password"]

