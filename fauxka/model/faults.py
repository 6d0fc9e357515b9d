"""Injected faults: what they are, how they are written to ZooKeeper, and which request each one
hits. Socket-free; fauxka/broker/fault_injection.py applies them in dispatch.

A fault is cluster state (a znode under zkstore.paths.FAULTS), so every broker sees the same list
and a restarted broker obeys it again. Kinds:

- `error`: the api answers `error` (per partition for partition apis: only the partitions the
  scope names, the others are served; Kafka's per-partition errors such as NOT_LEADER_OR_FOLLOWER);
- `throttle`: the api is served and its response carries `throttle_ms` (KIP-219: the client waits);
- `delay`: the response waits `delay_ms` plus a uniform random 0..`jitter_ms`;
- `hang`: no response at all while the fault lasts, then the connection closes;
- `close`: the connection closes instead of answering;
- `replication`: follower fetches of the scope's broker (the follower) are delayed by `delay_ms`, or,
  with `delay_ms` = -1, never answered, so the follower falls behind and leaves the ISR;
- `link`: the link between brokers `scope.broker` and `peer` is cut: each closes the connections the
  other opens to it (replica fetchers, forwarding and the controller channel), both ways;
- `storage`: broker `scope.broker`'s log of the scope's partitions (all without a topic) fails as a
  full disk does: its clients' partition requests answer KAFKA_STORAGE_ERROR for them, its follower
  fetches leave them out (the leader stops hearing from that replica, which leaves the ISR after
  replica.lag.time.max.ms), and the active controller, once that broker obeys the fault, moves their
  leadership off it and takes it out of their ISRs, once;
- `leader`: not a request fault but a one-shot action: the active controller makes the scope's
  broker lead the scope's topic partition (an in-sync replica), then deletes the fault;
- `zookeeper`: not a request fault either: the link between the scope's broker (every broker
  without one) and ZooKeeper is cut while the fault lasts, so ZooKeeper expires the broker's
  session after zookeeper.session.timeout.ms (its registration goes, the controller moves its
  leaderships, a cut controller's /controller goes); once the fault is removed or expires the
  broker reconnects, finds its session expired and registers again on a new one.

Requests brokers send each other (follower Fetch, AlterPartition, ControlledShutdown, Envelope,
AllocateProducerIds, and the controller's LeaderAndIsr, StopReplica, UpdateMetadata) are left alone unless the scope names their api (or the kind is `replication`),
so an api fault hits clients and not the cluster's own machinery.

`count` (how many requests it may hit, cluster-wide: each hit is a compare-and-set of the znode)
and `expires_ms` (wall clock) bound a fault; one without either lasts until removed.
"""

import datetime
import json
import random
from dataclasses import asdict, dataclass, field, replace

from .errors import ErrorCode

KINDS = ("error", "throttle", "delay", "hang", "close", "replication", "leader", "link", "storage", "zookeeper")
ACTIONS = frozenset(("leader", "zookeeper"))  # kinds that hit no request: something is done instead
PARTITION_APIS = frozenset((0, 1, 2, 21, 23))  # Produce, Fetch, ListOffsets, DeleteRecords, OffsetForLeaderEpoch
BROKER_APIS = frozenset((4, 5, 6, 7, 56, 58, 67))  # sent by brokers only
FETCH = 1


class FaultError(ValueError):
    """Bad fault input (an unknown kind, error name, ...): the message says what."""


def error_code(name_or_code: str | int) -> ErrorCode:
    """An ErrorCode from its Kafka name (NOT_LEADER_OR_FOLLOWER, any case) or number."""
    if isinstance(name_or_code, int) or str(name_or_code).lstrip("-").isdigit():
        try:
            return ErrorCode(int(name_or_code))
        except ValueError:
            raise FaultError(f"unknown error code {name_or_code}") from None
    try:
        return ErrorCode[str(name_or_code).lower()]
    except KeyError:
        raise FaultError(f"unknown error name {name_or_code!r} (Kafka's names, e.g. NOT_LEADER_OR_FOLLOWER)") from None


@dataclass(frozen=True, slots=True)
class Scope:
    """Which requests a fault hits; None matches anything."""
    broker: int | None = None  # the broker that answers (for `replication`: the follower)
    api_key: int | None = None
    min_version: int | None = None
    max_version: int | None = None
    topic: str | None = None
    partition: int | None = None
    client_id: str | None = None
    principal: str | None = None  # e.g. User:alice


@dataclass(frozen=True, slots=True)
class Fault:
    id: str
    kind: str
    scope: Scope = field(default_factory=Scope)
    error: int | None = None  # ErrorCode value, for `error`
    throttle_ms: int = 0
    delay_ms: int = 0
    jitter_ms: int = 0
    peer: int | None = None  # `link`: the broker at the other end
    count: int | None = None  # hits left; None: unbounded
    expires_ms: int | None = None  # wall clock, ms since the epoch; None: until removed
    created_ms: int = 0

    def __post_init__(self):
        validate(self)

    def expired(self, now_ms: int) -> bool:
        return (self.expires_ms is not None and now_ms >= self.expires_ms) or (self.count is not None and self.count <= 0)

    def delay_s(self, rng: random.Random | None = None) -> float:
        jitter = (rng or random).uniform(0, self.jitter_ms) if self.jitter_ms > 0 else 0.0
        return (max(self.delay_ms, 0) + jitter) / 1000

    def describe(self, now_ms: int | None = None) -> str:
        """One line; with `now_ms` (the wall clock, ms), an expiry says its local time and how far off it is."""
        scope = ", ".join(f"{k}={v}" for k, v in asdict(self.scope).items() if v is not None) or "everything"
        what = {"error": lambda: ErrorCode(self.error).name.upper(), "throttle": lambda: f"{self.throttle_ms} ms",
                "delay": lambda: f"{self.delay_ms} ms" + (f" + 0..{self.jitter_ms} ms" if self.jitter_ms else ""),
                "replication": lambda: "stopped" if self.delay_ms < 0 else f"{self.delay_ms} ms",
                "link": lambda: f"to broker {self.peer}"}.get(self.kind)
        bound = [f"count={self.count}"] if self.count is not None else []
        if self.expires_ms is not None:
            bound.append(_until(self.expires_ms, now_ms))
        return f"{self.id}: {self.kind}{' ' + what() if what else ''} on {scope}{' ' if bound else ''}{' '.join(bound)}"


def _until(expires_ms: int, now_ms: int | None) -> str:
    """'until 06:41:07 (in 29 s)' in local time; 'expired ... ago' once past."""
    at = datetime.datetime.fromtimestamp(expires_ms / 1000).strftime("%H:%M:%S")
    if now_ms is None:
        return f"until {at}"
    left_s = (expires_ms - now_ms) / 1000
    return f"until {at} (in {left_s:.0f} s)" if left_s >= 0 else f"until {at} (expired {-left_s:.0f} s ago)"


def validate(fault: Fault) -> None:
    if fault.kind not in KINDS:
        raise FaultError(f"unknown fault kind {fault.kind!r}; one of {', '.join(KINDS)}")
    if fault.kind == "error":
        if fault.error is None:
            raise FaultError("an error fault needs an error code")
        error_code(fault.error)
    if fault.kind == "throttle" and fault.throttle_ms <= 0:
        raise FaultError("a throttle fault needs throttle_ms > 0")
    if fault.kind == "delay" and fault.delay_ms <= 0 and fault.jitter_ms <= 0:
        raise FaultError("a delay fault needs delay_ms or jitter_ms > 0")
    if fault.kind in ("replication", "storage") and fault.scope.broker is None:
        raise FaultError("a replication fault needs the follower's broker id as its scope's broker")
    if fault.kind == "leader" and (fault.scope.broker is None or fault.scope.partition is None):
        raise FaultError("a leader fault needs a broker, a topic and a partition")
    if fault.kind == "link" and (fault.scope.broker is None or fault.peer is None or fault.scope.broker == fault.peer):
        raise FaultError("a link fault needs two different brokers (broker and peer)")
    if fault.kind == "zookeeper" and fault.count is not None:
        raise FaultError("a zookeeper fault lasts a duration or until removed, not a count of requests")
    if fault.count is not None and fault.count < 1:
        raise FaultError("count must be at least 1")
    if fault.jitter_ms < 0 or fault.throttle_ms < 0:
        raise FaultError("times must not be negative")
    s = fault.scope
    if s.partition is not None and s.topic is None:
        raise FaultError("a partition scope needs a topic")
    if s.min_version is not None and s.max_version is not None and s.min_version > s.max_version:
        raise FaultError("min_version is above max_version")


def encode(fault: Fault) -> bytes:
    return json.dumps(asdict(fault), separators=(",", ":"), sort_keys=True).encode()


def decode(data: bytes) -> Fault:
    payload = json.loads(data)
    payload["scope"] = Scope(**payload.get("scope") or {})
    return Fault(**payload)


def encode_obeyed(fault_ids, tracing: bool) -> bytes:
    """What a broker publishes under zkstore.paths.FAULTS_SEEN/<id>: the ids of the faults it obeys
    and whether it traces (fauxka.testing waits on it; the controller, for a `storage` fault)."""
    return json.dumps({"faults": sorted(fault_ids), "tracing": tracing}).encode()


def decode_obeyed(data: bytes) -> dict:
    """encode_obeyed's {"faults": [ids], "tracing": bool}; ValueError when the data is not that."""
    payload = json.loads(data)
    if not isinstance(payload, dict) or not isinstance(payload.get("faults"), list):
        raise ValueError(f"not what a broker publishes of the faults it obeys: {data!r}")
    return payload


def consumed(fault: Fault) -> Fault | None:
    """The fault after one hit: None when that was its last."""
    if fault.count is None:
        return fault
    return replace(fault, count=fault.count - 1) if fault.count > 1 else None


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """What matching needs to know about one request."""
    broker: int
    api_key: int
    version: int
    client_id: str | None
    principal: str
    partitions: tuple[tuple[str, int], ...] = ()  # the (topic, partition)s a partition api names
    replica_id: int = -1  # a follower's Fetch: its broker id
    from_broker: int = -1  # the broker that sent it (inter-broker client ids name it), else -1
    # a follower's incremental Fetch names only what changed; its fetch session at the leader holds
    # the rest, and their records come back all the same
    in_session: tuple[tuple[str, int], ...] = ()


def matches(fault: Fault, facts: RequestFacts, now_ms: int) -> bool:
    """Whether the fault hits this request (a partition scope: when the request names that partition)."""
    if fault.expired(now_ms) or fault.kind in ACTIONS:
        return False
    s = fault.scope
    if fault.kind == "link":
        return facts.from_broker >= 0 and {facts.broker, facts.from_broker} == {s.broker, fault.peer}
    if fault.kind == "storage":
        if facts.api_key == FETCH and facts.replica_id >= 0:
            return facts.replica_id == s.broker and _partitions_hit(s, facts)
        return facts.broker == s.broker and facts.api_key in PARTITION_APIS and _partitions_hit(s, facts, True)
    if fault.kind == "replication":
        return (facts.api_key == FETCH and facts.replica_id >= 0 and facts.replica_id == s.broker
                and (_partitions_hit(s, facts) or any(affects(s, tp) for tp in facts.in_session)))
    if s.broker is not None and s.broker != facts.broker:
        return False
    if s.api_key is None and (facts.api_key in BROKER_APIS or facts.replica_id >= 0):
        return False  # the cluster's own traffic, unless named
    if s.api_key is not None and s.api_key != facts.api_key:
        return False
    if s.min_version is not None and facts.version < s.min_version:
        return False
    if s.max_version is not None and facts.version > s.max_version:
        return False
    if s.client_id is not None and s.client_id != facts.client_id:
        return False
    if s.principal is not None and s.principal != facts.principal:
        return False
    return _partitions_hit(s, facts)


def _partitions_hit(s: Scope, facts: RequestFacts, named: bool = False) -> bool:
    """Whether the request names a partition of the scope (any, without a topic: unless `named`
    asks for at least one partition)."""
    if s.topic is None:
        return bool(facts.partitions) or not named
    return any(affects(s, tp) for tp in facts.partitions)


def affects(scope: Scope, tp: tuple[str, int]) -> bool:
    """Whether a matched fault's error goes to this partition of the request."""
    return (scope.topic is None or scope.topic == tp[0]) and (scope.partition is None or scope.partition == tp[1])


def first_match(faults, facts: RequestFacts, now_ms: int) -> Fault | None:
    """The oldest fault that hits the request (one fault per request: the oldest wins)."""
    for fault in sorted(faults, key=lambda f: (f.created_ms, f.id)):
        if matches(fault, facts, now_ms):
            return fault
    return None
