"""Client quotas enforced (Kafka's ClientQuotaManager family), socket-free at the core:

    manager.record(principal, client_id, value, now_ms) -> throttle_ms

- `produce` / `fetch` (producer_byte_rate / consumer_byte_rate): bytes; for the data plane to call.
- `request` (request_percentage): request handling time as a percentage of one thread
  (ClientRequestQuotaManager.nanosToPercentage); the server records every request; its throttle time
  is at most one sample window (ClientRequestQuotaManager.maxThrottleTimeMs).
- `mutation` (controller_mutation_rate, KIP-599): partitions created or deleted, a token bucket;
  `admit(...)` refuses a strict request's topic while the bucket is negative (THROTTLING_QUOTA_EXCEEDED).

Windows: quota.window.num samples of quota.window.size.seconds (Kafka's defaults 11 and 1; the
mutation quota's controller.quota.window.* likewise). Quotas come from ZooKeeper's
/config/users, /config/users/<u>/clients and /config/clients (QuotaConfigs, watched), resolved as
fauxka/model/quota_math.py says. Throttle times go to `fauxka_quota_throttle_seconds` per quota, user and client id.
"""

import functools
from typing import Any

from fauxka.model.quota_math import DEFAULT, Entity, Rate, TokenBucket, resolve, sensor_key, throttle_ms
from fauxka.zkstore import paths as zp
from fauxka.zkstore.config_entities import sanitize
from fauxka.zkstore.watch_set import WatchSet

QUOTA_TYPES = ("producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate")


@functools.lru_cache(maxsize=4096)
def user_of(principal: str) -> str:
    """The sanitized user name of `User:<name>` (Kafka keys user quotas by the sanitized principal name)."""
    return sanitize(principal.partition(":")[2])


_sanitized = functools.lru_cache(maxsize=4096)(sanitize)


class QuotaConfigs:
    """Every quota entity's values, followed through ZooKeeper watches."""

    def __init__(self, zk, log: Any):
        self._watches = WatchSet(zk)
        self._log = log
        self.entities: dict[Entity, dict[str, str]] = {}  # entities that set at least one quota
        self._children: dict[str, set[str]] = {}  # parent path (below /config) -> entity names watched
        self.version = 0  # bumped on every change: managers drop their resolved quotas

    def start(self) -> None:
        self._watches.add("children", zp.entity_configs_path("users"), self._on_users)
        self._watches.add("children", zp.entity_configs_path("clients"),
                          lambda names: self._on_entities(names, lambda c: (None, c), "clients"))

    def stop(self) -> None:
        self._watches.cancel_all()

    def get(self, entity: Entity) -> dict[str, str] | None:
        return self.entities.get(entity)

    def _on_users(self, names: list[str] | None) -> None:
        for gone in self._children.get("users", set()) - set(names or ()):  # its per-client quotas go too
            self._watches.remove(zp.user_clients_path(gone))
            self._on_entities([], lambda c, u=gone: (u, c), f"users/{gone}/clients")
        self._on_entities(names, lambda u: (u, None), "users")
        for user in names or ():
            self._watches.add("children", zp.user_clients_path(user),
                              lambda clients, u=user: self._on_entities(clients, lambda c: (u, c), f"users/{u}/clients"))

    def _on_entities(self, names: list[str] | None, entity_of, parent: str) -> None:
        names = set(names or ())
        for gone in [n for n in self._children.get(parent, set()) if n not in names]:
            self._watches.remove(zp.entity_config_path(parent, gone))
            self.entities.pop(entity_of(gone), None)
            self.version += 1
        self._children[parent] = names
        for name in names:
            self._watches.add("data", zp.entity_config_path(parent, name),
                              lambda v, e=entity_of(name): self._on_config(e, v))

    def _on_config(self, entity: Entity, value) -> None:
        try:
            config = zp.decode_entity_config(value[0]) if value and value[0] else {}
        except (ValueError, KeyError, AttributeError) as exc:
            self._log.error("bad quota config znode", entity=entity, error=repr(exc))
            return
        quotas = {k: v for k, v in config.items() if k in QUOTA_TYPES}
        if quotas:
            self.entities[entity] = quotas
        else:  # e.g. a user with SCRAM credentials only: not a quota entity
            self.entities.pop(entity, None)
        self.version += 1


class ClientQuotaManager:
    """A rate quota of one type: record(principal, client_id, value, now_ms) -> throttle_ms (0: within)."""

    def __init__(self, quota_type: str, configs, window_num: int, window_s: int, metrics=None,
                 bounded: bool = False):
        self.quota_type = quota_type
        self._bounded = bounded  # ClientRequestQuotaManager: at most one sample window (boundedThrottleTime)
        self._configs = configs
        self.window_num, self.window_ms = window_num, window_s * 1000
        self._sensors: dict[tuple[str, str], Any] = {}
        self._metrics = metrics

    def quota(self, principal: str, client_id: str) -> tuple[tuple[str, str], float] | None:
        """(sensor key, bound) of the quota that applies, or None (unlimited)."""
        if not self._configs.entities:  # no quota anywhere: nothing to resolve (every request asks)
            return None
        user, client = user_of(principal), _sanitized(client_id or "")
        found = resolve(user, client, self.quota_type, self._configs.get)
        return None if found is None else (sensor_key(found[0], user, client), found[1])

    def _sensor(self, key: tuple[str, str], bound: float):
        sensor = self._sensors.get(key)
        if sensor is None:
            sensor = self._sensors[key] = Rate(self.window_num, self.window_ms)
        return sensor

    def record(self, principal: str, client_id: str, value: float, now_ms: float) -> int:
        found = self.quota(principal, client_id)
        if found is None:
            return 0
        key, bound = found
        sensor = self._sensor(key, bound)
        sensor.record(value, now_ms)
        throttle = throttle_ms(sensor, bound, now_ms)
        if self._bounded:
            throttle = min(throttle, self.window_ms)
        self._observe(key, throttle)
        return throttle

    def unrecord(self, principal: str, client_id: str, value: float, now_ms: float) -> None:
        """ClientQuotaManager.unrecordQuotaSensor: a throttled Fetch answers empty, so its bytes are taken
        back (recorded as a negative value, as Kafka does)."""
        found = self.quota(principal, client_id)
        if found is not None:
            self._sensor(*found).record(-value, now_ms)

    def max_value_in_window(self, principal: str, client_id: str) -> float | None:
        """ClientQuotaManager.getMaxValueInQuotaWindow: the most a client may take in (num - 1) windows
        without being throttled (a consumer's Fetch max_bytes is capped to it); None: no quota."""
        found = self.quota(principal, client_id)
        return None if found is None else found[1] * (self.window_num - 1) * self.window_ms / 1000

    def _observe(self, key: tuple[str, str], throttle: int) -> None:
        if self._metrics is not None and throttle > 0:
            self._metrics.quota_throttle_seconds.labels(self.quota_type, *key).inc(throttle / 1000)
            self._metrics.quota_throttled.labels(self.quota_type, *key).inc()

    def set_window(self, window_num: int, window_s: int) -> None:
        """quota.window.* changed dynamically: new sensors with the new windows (Kafka resets them too)."""
        if (window_num, window_s * 1000) != (self.window_num, self.window_ms):
            self.window_num, self.window_ms = window_num, window_s * 1000
            self._sensors.clear()


class MutationQuotaManager(ClientQuotaManager):
    """controller_mutation_rate (KIP-599): permits are partitions created, added or deleted."""

    def _sensor(self, key: tuple[str, str], bound: float) -> TokenBucket:
        bucket = self._sensors.get(key)
        if bucket is None or bucket.quota != bound:
            bucket = self._sensors[key] = TokenBucket(bound, bound * self.window_num * self.window_ms / 1000)
        return bucket

    def admit(self, principal: str, client_id: str, permits: int, now_ms: float, strict: bool) -> bool:
        """StrictControllerMutationQuota.record: False (THROTTLING_QUOTA_EXCEEDED) while the bucket is
        negative; otherwise the permits are taken. A permissive request (older versions) always passes."""
        found = self.quota(principal, client_id)
        if found is None:
            return True
        bucket = self._sensor(*found)
        if strict and bucket.exceeded(now_ms):
            return False
        bucket.record(permits, now_ms)
        return True

    def throttle(self, principal: str, client_id: str, now_ms: float) -> int:
        found = self.quota(principal, client_id)
        if found is None:
            return 0
        throttle = self._sensor(*found).throttle_ms(now_ms)
        self._observe(found[0], throttle)
        return throttle

    def record(self, principal: str, client_id: str, value: float, now_ms: float) -> int:
        self.admit(principal, client_id, int(value), now_ms, strict=False)
        return self.throttle(principal, client_id, now_ms)


class Quotas:
    """The broker's quota managers (broker.quotas)."""

    def __init__(self, zk, config, log: Any, metrics=None):
        self.configs = QuotaConfigs(zk, log)
        num, size = config["quota.window.num"], config["quota.window.size.seconds"]
        self.produce = ClientQuotaManager("producer_byte_rate", self.configs, num, size, metrics)
        self.fetch = ClientQuotaManager("consumer_byte_rate", self.configs, num, size, metrics)
        self.request = ClientQuotaManager("request_percentage", self.configs, num, size, metrics, bounded=True)
        self.mutation = MutationQuotaManager("controller_mutation_rate", self.configs,
                                             config["controller.quota.window.num"],
                                             config["controller.quota.window.size.seconds"], metrics)

    def configured(self) -> bool:
        """Whether any entity has a quota (none: no request is ever throttled)."""
        return bool(self.configs.entities)

    def start(self) -> None:
        self.configs.start()

    def stop(self) -> None:
        self.configs.stop()

    def record_request(self, principal: str, client_id: str, percent: float, now_ms: float) -> int:
        """request_percentage: the handling time as a percentage of one thread; the throttle time (ms)."""
        return self.request.record(principal, client_id, percent, now_ms)

    def record_produce(self, principal: str, client_id: str, size: int, now_ms: float) -> int:
        """producer_byte_rate: a Produce request's size; the throttle time (ms)."""
        return self.produce.record(principal, client_id, size, now_ms)

    def record_fetch(self, principal: str, client_id: str, size: int, now_ms: float) -> int:
        """consumer_byte_rate: a consumer's response bytes; over the quota they are taken back (the
        answer goes out empty, KafkaApis.handleFetchRequest). The throttle time (ms)."""
        throttle = self.fetch.record(principal, client_id, size, now_ms)
        if throttle > 0:
            self.fetch.unrecord(principal, client_id, size, now_ms)
        return throttle

    def fetch_window_bytes(self, principal: str, client_id: str) -> float | None:
        """The most bytes consumer_byte_rate lets a consumer take in one window (None: no quota)."""
        return self.fetch.max_value_in_window(principal, client_id)

    def admit_mutations(self, principal: str, client_id: str, permits: int, now_ms: float, strict: bool) -> bool:
        """controller_mutation_rate: whether `permits` topic/partition mutations may go ahead."""
        return self.mutation.admit(principal, client_id, permits, now_ms, strict)

    def mutation_throttle(self, principal: str, client_id: str, now_ms: float) -> int:
        """controller_mutation_rate's throttle time (ms) for the client."""
        return self.mutation.throttle(principal, client_id, now_ms)

    def set_windows(self, num: int, size_s: int) -> None:
        for manager in (self.produce, self.fetch, self.request):
            manager.set_window(num, size_s)


__all__ = ["Quotas", "ClientQuotaManager", "MutationQuotaManager", "QuotaConfigs", "DEFAULT", "user_of"]
