"""Kafka's client quota arithmetic, socket-free (org.apache.kafka.common.metrics and
kafka.server.ClientQuotaManager / ControllerMutationQuotaManager).

- Which quota applies to (user, client-id): the most specific ZooKeeper entity that sets the quota
  type, in ClientQuotaManager's order (user+client, user+<default> client, user, <default> user+client,
  <default> user+<default> client, <default> user, client, <default> client).
- `Rate`: Kafka's SampledStat Rate over `quota.window.num` samples of `quota.window.size.seconds`;
  the window it divides by counts at least num-1 full samples (Rate.windowSize).
- Throttle time (QuotaUtils.throttleTime): (observed - bound) / bound * window size.
- `TokenBucket` (KIP-599, controller_mutation_rate): burst = quota * num * size; a strict request is
  refused while the bucket is negative; the throttle time is the time to refill it to zero.
"""

from dataclasses import dataclass, field
from typing import Callable, Mapping

DEFAULT = "<default>"
Entity = tuple[str | None, str | None]  # (sanitized user or <default> or None, client id or <default> or None)


def candidates(user: str, client_id: str) -> list[Entity]:
    """ZooKeeper entities that may hold the quota of (user, client id), most specific first."""
    return [(user, client_id), (user, DEFAULT), (user, None), (DEFAULT, client_id), (DEFAULT, DEFAULT),
            (DEFAULT, None), (None, client_id), (None, DEFAULT)]


def resolve(user: str, client_id: str, quota_type: str,
            configs: Callable[[Entity], Mapping[str, str] | None]) -> tuple[Entity, float] | None:
    """(the entity whose quota applies, its value) or None when no entity sets `quota_type`."""
    for entity in candidates(user, client_id):
        found = configs(entity)
        if found and quota_type in found:
            try:
                return entity, float(found[quota_type])
            except ValueError:
                continue
    return None


def sensor_key(entity: Entity, user: str, client_id: str) -> tuple[str, str]:
    """Kafka's metric tags (user, client-id): the requesting user / client id for each level the quota was
    found at, "" for the other. A <default> quota therefore limits each user / client id separately."""
    found_user, found_client = entity
    return (user if found_user is not None else "", client_id if found_client is not None else "")


@dataclass
class Rate:
    window_num: int
    window_ms: int
    samples: list[list[float]] = field(default_factory=list)  # [start_ms, value]

    def _purge(self, now_ms: float) -> None:
        horizon = now_ms - self.window_num * self.window_ms
        self.samples = [s for s in self.samples if s[0] > horizon]

    def record(self, value: float, now_ms: float) -> None:
        self._purge(now_ms)
        if not self.samples or now_ms >= self.samples[-1][0] + self.window_ms:
            self.samples.append([now_ms, 0.0])
        self.samples[-1][1] += value

    def window_size_ms(self, now_ms: float) -> float:
        """Rate.windowSize: elapsed since the oldest sample, at least num-1 full windows."""
        self._purge(now_ms)
        elapsed = now_ms - self.samples[0][0] if self.samples else 0
        full = int(elapsed // self.window_ms)
        if full < self.window_num - 1:
            elapsed += (self.window_num - 1 - full) * self.window_ms
        return elapsed

    def measure(self, now_ms: float) -> float:
        """Per second."""
        size = self.window_size_ms(now_ms)
        return sum(s[1] for s in self.samples) / (size / 1000) if size > 0 else 0.0


def throttle_ms(rate: Rate, bound: float, now_ms: float) -> int:
    """QuotaUtils.throttleTime: 0 within the bound."""
    observed = rate.measure(now_ms)
    if bound <= 0:
        return int(rate.window_num * rate.window_ms) if observed > 0 else 0
    if observed <= bound:
        return 0
    return int((observed - bound) / bound * rate.window_size_ms(now_ms))


@dataclass
class TokenBucket:
    quota: float  # tokens per second
    burst: float  # quota * window num * window size seconds
    tokens: float = None
    last_ms: float = None

    def refill(self, now_ms: float) -> None:
        if self.tokens is None:
            self.tokens, self.last_ms = self.burst, now_ms
        self.tokens = min(self.burst, self.tokens + self.quota * max(now_ms - self.last_ms, 0) / 1000)
        self.last_ms = now_ms

    def exceeded(self, now_ms: float) -> bool:
        self.refill(now_ms)
        return self.tokens < 0

    def record(self, permits: float, now_ms: float) -> None:
        self.refill(now_ms)
        self.tokens -= permits

    def throttle_ms(self, now_ms: float) -> int:
        """Time until the bucket is back to zero (ControllerMutationQuotaManager.throttleTime)."""
        self.refill(now_ms)
        if self.tokens >= 0 or self.quota <= 0:
            return 0
        return int(-self.tokens / self.quota * 1000)
