"""Client quotas in ZK mode (Kafka's ZkAdminManager): entity names and paths, quota values with
Java's semantics, AlterClientQuotas. Stored in /config/{users,clients,ips}; brokers enforce them (fauxka/broker/quotas.py)."""

import asyncio
import math
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.model.quota_entities import CLIENT_ID, IP, IP_KEYS, JAVA_DOUBLE, QUOTA_KEYS, USER, USER_KEYS
from fauxka.zkstore import MultiFailed, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.config_entities import DEFAULT, decode_config, sanitize_entity
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from .audit import AuditLog, Caller
from .election import ControllerElection

NOT_CONTROLLER_MESSAGE = "This is not the correct controller for this cluster."
_LIMITS = {"LONG": (-(1 << 63), (1 << 63) - 1), "INT": (-(1 << 31), (1 << 31) - 1)}
_ATTEMPTS = 3


def java_double_str(value: float) -> str:
    """java.lang.Double.toString (shortest digits)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(value)  # Python's fixed notation covers Java's range, with its trailing ".0"
    shortest = Decimal(repr(abs(value))).normalize().as_tuple()  # repr: the shortest round-trip digits
    digits = "".join(map(str, shortest.digits))
    exp10 = len(digits) - 1 + shortest.exponent
    return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:] or '0'}E{exp10}"


def _java_to_integral(value: float, kind: str) -> int:
    """Scala's Double.toLong / toInt: NaN is 0, out of range saturates, otherwise truncation."""
    if math.isnan(value):
        return 0
    low, high = _LIMITS[kind]
    return max(low, min(high, int(value))) if math.isfinite(value) else (high if value > 0 else low)


@dataclass(frozen=True)
class Target:
    config_type: str  # users | clients | ips
    name: str  # sanitized: "alice", "alice/clients/app", "<default>", "10.0.0.1"
    keys: dict[str, str]  # the keys an op may set, with their ConfigDef type

    @property
    def validation_keys(self) -> dict[str, str]:
        """AdminZkClient: default users and <user, client> pairs are validated as clients."""
        if self.config_type == "users" and (self.name == DEFAULT or "/clients" in self.name):
            return QUOTA_KEYS
        return self.keys


def entity_target(entity: dict[str, str | None]) -> Target:
    if not entity:
        raise KafkaError(ErrorCode.invalid_request, "Invalid empty client quota entity")
    found: dict[str, str] = {}
    for entity_type, name in entity.items():
        if entity_type not in (USER, CLIENT_ID, IP):
            raise KafkaError(ErrorCode.invalid_request, f"Unhandled client quota entity type: {entity_type}")
        found[entity_type] = sanitize_entity(name)
        if name == "":
            raise KafkaError(ErrorCode.invalid_request, f"Empty {entity_type} not supported")
    user, client, ip = found.get(USER), found.get(CLIENT_ID), found.get(IP)
    if ip is not None and (user is not None or client is not None):
        raise KafkaError(ErrorCode.invalid_request, "Invalid quota entity combination, "
                                            "IP entity should not be used with user/client ID entity.")
    if user is not None and client is not None:
        return Target("users", f"{user}/clients/{client}", USER_KEYS)
    if user is not None:
        return Target("users", user, USER_KEYS)
    if client is not None:
        return Target("clients", client, QUOTA_KEYS)
    return Target("ips", ip, IP_KEYS)


def entity_label(entity: dict[str, str | None]) -> str:
    rank = {USER: 0, CLIENT_ID: 1, IP: 2}
    ordered = sorted(entity.items(), key=lambda item: rank.get(item[0], 3))
    return ",".join(f"{t}={DEFAULT if n is None else n}" for t, n in ordered)


async def check_ip(target: Target, resolve_timeout_s: float = 5.0) -> None:
    """DynamicConfig.Ip.isValidIpEntity: an IP literal or a resolvable host (the sanitized name)."""
    if target.config_type != "ips" or target.name == DEFAULT:
        return
    try:
        async with asyncio.timeout(resolve_timeout_s):
            await asyncio.get_running_loop().getaddrinfo(target.name, None)
    except (OSError, UnicodeError, asyncio.TimeoutError):
        raise KafkaError(ErrorCode.invalid_request, f"{target.name} is not a valid IP or resolvable host.") from None


def apply_ops(props: dict[str, str], ops: list[tuple[str, float | None]], keys: dict[str, str]) -> dict[str, str]:
    """The entity's new properties after `ops` (None removes any key), validated as Kafka does."""
    props = dict(props)
    for key, value in ops:
        if value is None:
            props.pop(key, None)
            continue
        kind = keys.get(key)
        if kind is None:
            raise KafkaError(ErrorCode.invalid_request, f"Invalid configuration key {key}")
        if kind == "DOUBLE":
            props[key] = java_double_str(value)
        elif kind in _LIMITS:
            integral = _java_to_integral(value + 1e-6, kind)
            if abs(float(integral) - value) > 1e-6:
                raise KafkaError(ErrorCode.invalid_request, f"Configuration {key} must be a {kind} value")
            props[key] = str(integral)
        else:  # a SCRAM credential key: Kafka's IllegalStateException
            raise KafkaError(ErrorCode.unknown_server_error, None)
    return props


def validate_stored(props: dict[str, str], keys: dict[str, str]) -> None:
    """DynamicConfig.validate before a write: a key or value left in ZooKeeper by someone else that
    Kafka refuses (IllegalArgumentException, ConfigException) fails the entity."""
    for key, value in props.items():
        kind, text = keys.get(key), value.strip()
        if kind in _LIMITS:
            ok = re.fullmatch(r"[+-]?\d+", text) and _LIMITS[kind][0] <= int(text) <= _LIMITS[kind][1] \
                and (kind == "LONG" or int(text) >= 0)
        else:
            ok = kind == "STRING" or (kind == "DOUBLE" and JAVA_DOUBLE.fullmatch(text))
        if not ok:
            raise KafkaError(ErrorCode.unknown_server_error, None)


@dataclass
class Alteration:
    entity: dict[str, str | None]  # entity_type -> name (None: the default), as Kafka's HashMap holds it
    ops: list[tuple[str, float | None]]  # (key, value or None to remove)


@dataclass
class AlterOutcome:
    entity: dict[str, str | None]  # Kafka's HashMap order
    error_code: int = ErrorCode.none
    error_message: str | None = None


@dataclass(eq=False)
class QuotaWrites:
    """The controller's client quota writes: /config/{users,clients,ips}/<entity> read and written, fenced."""

    zk: ZkStore
    writer: FencedWriter
    election: ControllerElection
    audit: AuditLog
    log: Any
    # this controller's quota writes, one at a time
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    async def alter(self, alterations: list[Alteration], validate_only: bool, caller: Caller) -> list[AlterOutcome]:
        """One fenced multi-op per entity. Like Kafka's result map, an entity given twice answers once
        (at its first position, with the last outcome); both alterations are applied in order."""
        outcomes: dict[frozenset, AlterOutcome] = {}
        moved = False
        for alteration in alterations:
            started = time.perf_counter()
            entity = alteration.entity
            code, message = ErrorCode.not_controller, NOT_CONTROLLER_MESSAGE
            if not moved:
                try:
                    target = entity_target(entity)
                    await check_ip(target)
                    async with self._lock:  # this controller's writes never race
                        await self._alter_entity(target, alteration.ops, validate_only)
                    code, message = ErrorCode.none, None
                except KafkaError as exc:
                    code, message = exc.code, exc.message
                except ControllerMoved as exc:
                    self.election.resign(str(exc))
                    moved = True
                except ZkUnavailable as exc:
                    self.log.warning("client quota write interrupted", error=str(exc))
                    code, message = ErrorCode.request_timed_out, None
                except Exception as exc:  # Kafka answers any other throwable with UNKNOWN_SERVER_ERROR
                    self.log.exception("client quota alteration failed", error=repr(exc))
                    code, message = ErrorCode.unknown_server_error, None
            outcome = outcomes.setdefault(frozenset(entity.items()), AlterOutcome(entity))
            outcome.error_code, outcome.error_message = code, message
            self.audit.record(caller, resource_type="CLIENT_QUOTA", resource_name=entity_label(entity),
                              action="ALTER_CLIENT_QUOTAS", validate_only=validate_only, error_code=code,
                              error_message=message, latency_ms=(time.perf_counter() - started) * 1000,
                              ops=[{"key": k, "value": v} for k, v in alteration.ops])
        return list(outcomes.values())

    async def _alter_entity(self, target: Target, ops: list[tuple[str, float | None]], validate_only: bool) -> None:
        path = zp.entity_config_path(target.config_type, target.name)
        change = zp.encode_config_change(f"{target.config_type}/{target.name}")  # users/alice/clients/app
        notify = Op.create(zp.CONFIG_CHANGE_PREFIX, change, sequence=True)
        for attempt in range(_ATTEMPTS):
            got = await self.zk.get(path)
            props = apply_ops(decode_config(got[0] if got else None), ops, target.keys)
            if validate_only:
                return
            validate_stored(props, target.validation_keys)
            data = zp.encode_entity_config(props)  # other keys (SCRAM credentials) are kept
            if got is not None:
                write = [Op.set(path, data, got[1].version)]
            else:
                parts = path.split("/")  # Kafka's createRecursive: absent ancestors are created empty
                ancestors = ["/".join(parts[:i]) for i in range(3, len(parts))]
                found = await asyncio.gather(*(self.zk.exists(a) for a in ancestors))
                write = [*(Op.create(a, b"") for a, stat in zip(ancestors, found) if stat is None), Op.create(path, data)]
            try:
                await self.writer.write([*write, notify])
                return
            except MultiFailed as failed:  # changed by another writer (kafka-configs?): read again
                self.log.info("client quota write raced", path=path, error=repr(failed.cause), attempt=attempt)
        raise KafkaError(ErrorCode.unknown_server_error, None)

