"""Dynamic broker configs (/config/brokers/<id> and <default>) taking effect on a running broker, as
Kafka's DynamicBrokerConfig reconfigures it:

- a listener's SSL key and trust stores (`listener.name.<l>.ssl.keystore.*` / `ssl.truststore.*`, the
  keys Kafka reconfigures): the listener's TLS context is rebuilt for new connections (and the
  inter-broker client context, when that listener is the inter-broker one); a store that does not
  load is logged and the old context kept;
- topic defaults (`log.retention.ms`, ...): the controller reads them for every topic (nothing to do);
- anything else (thread counts, connection limits, ...): accepted with a log line saying fauxka
  does not act on it.
"""

from typing import Any

from fauxka.model import broker_configs as bc
from fauxka.model.topic_configs import BROKER_SYNONYM_KEYS

from .config import BrokerConfig
from .metadata_cache import MetadataCache
from .tls.settings import TlsConfigError, inter_broker_context, listener_tls


class DynamicConfigApplier:
    def __init__(self, config: BrokerConfig, cache: MetadataCache, log: Any):
        self._config = config
        self._entity = str(config.broker_id)
        self._cache = cache
        self._log = log.bind(component="dynamic-config")
        self._applied: dict[str, str] = {}
        cache.subscribe(self._on_cache_event)

    def _on_cache_event(self, event: tuple) -> None:
        if event[0] == "broker_config" and event[1] in (bc.DEFAULT_ENTITY, self._entity):
            self.apply()

    def effective(self) -> dict[str, str]:
        configs = self._cache.broker_configs
        return {**bc.effective_dynamic(configs.get(bc.DEFAULT_ENTITY, {}), False),
                **bc.effective_dynamic(configs.get(self._entity, {}), True)}

    def apply(self) -> None:
        current = self.effective()
        changed = {k for k in current.keys() | self._applied.keys() if current.get(k) != self._applied.get(k)}
        self._applied = current
        listeners = set()
        for key in sorted(changed):
            match = bc.LISTENER_CONFIG.fullmatch(key)
            base = bc.base_name(key)
            if match and base in bc.SSL_RECONFIGURABLE:
                listeners.add(key.split(".")[2].upper())
            elif base in BROKER_SYNONYM_KEYS:
                self._log.info("dynamic broker config applies to topic defaults", key=key)
            else:
                self._log.warning("dynamic broker config accepted; fauxka does not act on it", key=key)
        for listener in sorted(listeners):
            self._reload_tls(listener, current)

    def _reload_tls(self, listener: str, dynamic: dict[str, str]) -> None:
        config = self._config
        endpoint = next((ep for ep in config.listeners if ep.listener == listener), None)
        tls = config.tls
        if endpoint is None or endpoint.listener not in tls.listeners:
            self._log.warning("dynamic SSL config for a listener without TLS ignored", listener=listener)
            return
        originals = {**config.originals, **dynamic}
        try:
            new = listener_tls(originals, listener, endpoint.security_protocol)
            client = (inter_broker_context(originals, listener, endpoint.security_protocol)
                      if listener == config.inter_broker_listener else tls.inter_broker)
        except TlsConfigError as exc:
            self._log.error("dynamic SSL config not applied; the listener keeps its stores", listener=listener,
                            error=str(exc))
            return
        tls.listeners[listener] = new
        tls.inter_broker = client
        self._log.info("listener SSL stores reloaded", listener=listener)
