"""CreateAcls and DeleteAcls on the controller, as Kafka's AclApis and ZooKeeper-mode AclAuthorizer
(3.4) do them: per binding checks (the CLUSTER resource's one name, an empty name, unknown codes, a
'/' in the name), then one read-modify-write of each resource's znode, version-checked, with its
change notification, in one fenced multi-op; retried when another writer got there first.
Kafka answers once ZooKeeper is written; fauxka also waits (briefly) until its own ACL cache shows
the change, so a DescribeAcls on the controller right after sees it.
"""

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from fauxka.model.acl_model import (CLUSTER_NAME, AccessControlEntry, AclBinding, AclBindingFilter, ResourcePattern,
                        ResourceType, parse_principal)
from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.zkstore import BadVersion, MultiFailed, NoNode, NodeExists, ZkStore, ZkUnavailable
from fauxka.zkstore.acl_znodes import change_notification, decode_acls, encode_acls, resource_path
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from .audit import AuditLog, Caller
from .election import ControllerElection
from .write_waits import WriteWaits

INVALID_CLUSTER_NAME = f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
EMPTY_NAME = "Invalid empty resource name"
FAILED_TO_CREATE = "Failed to create ACL"
MAX_ATTEMPTS = 11  # AclAuthorizer: a first try and maxUpdateRetries = 10 more
RETRY_BACKOFF_S, RETRY_JITTER_S = 0.1, 0.05  # AclAuthorizer.retryBackoffMs, retryBackoffJitterMs
CACHE_WAIT_S = 5.0


@dataclass
class Outcome:
    error_code: int = ErrorCode.none
    error_message: str | None = None


@dataclass
class DeletedAcl:
    binding: AclBinding
    outcome: Outcome


@dataclass
class FilterResult:
    outcome: Outcome  # the filter's own error: only when its resources could not even be read
    deleted: list[DeletedAcl]


def check_creation(binding: AclBinding) -> None:
    """AclApis.handleCreateAcls' checks, then AclAuthorizer.validateAclBinding's (INVALID_REQUEST)."""
    pattern = binding.pattern
    if pattern.resource_type == ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        raise KafkaError(ErrorCode.invalid_request, INVALID_CLUSTER_NAME)
    if pattern.name == "":
        raise KafkaError(ErrorCode.invalid_request, EMPTY_NAME)
    if binding.is_unknown or "/" in pattern.name:
        raise KafkaError(ErrorCode.invalid_request, FAILED_TO_CREATE)


class AclView(Protocol):
    """This broker's ACL cache (fauxka/broker/auth/acl_cache.py), as the writes read and wait on it."""

    def patterns(self) -> list[ResourcePattern]: ...

    def entries(self, pattern: ResourcePattern) -> tuple[AccessControlEntry, ...]: ...

    async def wait_until(self, check: Callable[[], bool], timeout_s: float) -> bool: ...


@dataclass(eq=False)
class AclWrites:
    """The controller's ACL writes: each resource's znode read, transformed and written, fenced."""

    zk: ZkStore
    writer: FencedWriter
    election: ControllerElection
    waits: WriteWaits
    audit: AuditLog
    log: Any
    # this controller's ACL writes never race
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    async def create(self, cache: AclView, bindings: list[AclBinding], caller: Caller) -> list[Outcome]:
        """Outcomes in request order. `cache` is this broker's AclCache."""
        started = time.perf_counter()
        outcomes = [Outcome() for _ in bindings]
        by_pattern: dict[ResourcePattern, list[int]] = {}
        for index, binding in enumerate(bindings):
            try:
                check_creation(binding)
                by_pattern.setdefault(binding.pattern, []).append(index)
            except KafkaError as exc:
                outcomes[index] = Outcome(exc.code, exc.message)
        expected: dict[ResourcePattern, tuple[Outcome, tuple]] = {}
        async with self._lock:
            for pattern, indexes in by_pattern.items():
                entries = [bindings[i].entry for i in indexes]

                def add(current: list[AccessControlEntry], entries=entries) -> list[AccessControlEntry]:
                    for entry in entries:
                        parse_principal(entry.principal)  # AclEntry: a malformed principal fails the resource
                    return current + [e for e in dict.fromkeys(entries) if e not in current]

                outcome, written = await self._guarded(pattern, add)
                for i in indexes:
                    outcomes[i] = outcome
                if written is not None:
                    expected[pattern] = (outcome, written)
        await self._settle(cache, expected)
        latency_ms = (time.perf_counter() - started) * 1000
        for binding, outcome in zip(bindings, outcomes):
            self._audit(caller, binding, "CREATE_ACLS", outcome, latency_ms)
        return outcomes

    async def delete(self, cache: AclView, filters: list[AclBindingFilter], caller: Caller) -> list[FilterResult]:
        """Per filter, the bindings it deleted. A binding matched by several filters counts for the first."""
        started = time.perf_counter()
        results = [FilterResult(Outcome(), []) for _ in filters]
        resources = cache.patterns() + [p for f in filters if f.pattern.matches_at_most_one
                                        for p in f.pattern.exact_patterns()]
        expected: dict[ResourcePattern, tuple[Outcome, tuple]] = {}
        async with self._lock:
            for pattern in dict.fromkeys(resources):
                matching = [(i, f) for i, f in enumerate(filters) if f.pattern.matches(pattern)]
                if not matching:
                    continue
                deleted: dict[AccessControlEntry, int] = {}

                def remove(current: list[AccessControlEntry], matching=matching, deleted=deleted):
                    deleted.clear()
                    for entry in current:
                        first = next((i for i, f in matching if f.entry.matches(entry)), None)
                        if first is not None:
                            deleted[entry] = first
                    return [e for e in current if e not in deleted]

                outcome, written = await self._guarded(pattern, remove)
                for entry, index in deleted.items():
                    results[index].deleted.append(DeletedAcl(AclBinding(pattern, entry), outcome))
                if outcome.error_code != ErrorCode.none and not deleted:  # failed before reading what it would delete
                    for index, _ in matching:
                        if results[index].outcome.error_code == ErrorCode.none:
                            results[index].outcome = outcome
                if deleted and written is not None:
                    expected[pattern] = (outcome, written)
        await self._settle(cache, expected)
        latency_ms = (time.perf_counter() - started) * 1000
        for result in results:
            for deletion in result.deleted:
                self._audit(caller, deletion.binding, "DELETE_ACLS", deletion.outcome, latency_ms)
        return results

    async def _guarded(self, pattern: ResourcePattern, transform) -> tuple[Outcome, tuple | None]:
        """_update with Kafka's answers for what can go wrong: the outcome, and the entries written."""
        if not self.election.active:
            return Outcome(ErrorCode.not_controller), None
        try:
            return Outcome(), await self._update(pattern, transform)
        except KafkaError as exc:
            return Outcome(exc.code, exc.message), None
        except ControllerMoved as exc:
            self.election.resign(str(exc))
            return Outcome(ErrorCode.not_controller), None
        except ZkUnavailable as exc:
            self.log.warning("ACL write interrupted", resource=str(pattern), error=str(exc))
            return Outcome(ErrorCode.request_timed_out), None
        except ValueError as exc:  # a malformed principal, or an unreadable znode: Kafka's ApiException wrapper
            self.log.info("ACL update failed", resource=str(pattern), error=str(exc))
            return Outcome(ErrorCode.unknown_server_error), None

    async def _update(self, pattern: ResourcePattern, transform) -> tuple[AccessControlEntry, ...]:
        """AclAuthorizer.updateResourceAcls: read the znode, transform its entries, write them back at the
        version read (delete the znode when none remain), with the change notification. Returns the
        entries written; nothing is written when they do not change."""
        path = resource_path(pattern)
        notify_path, notify_data = change_notification(pattern)
        for _ in range(MAX_ATTEMPTS):
            got = await self.zk.get(path)
            current = decode_acls(got[0]) if got else []
            new = transform(current)
            if new == current:
                return tuple(new)
            if not new:
                write = Op.delete(path, got[1].version)
            elif got is not None:
                write = Op.set(path, encode_acls(new), got[1].version)
            else:
                write = Op.create(path, encode_acls(new))
            try:
                await self.writer.write([write, Op.create(notify_path, notify_data, sequence=True)])
                return tuple(new)
            except MultiFailed as failed:
                if failed.index != 0 or not isinstance(failed.cause, (BadVersion, NodeExists, NoNode)):
                    self.log.error("ACL write failed", path=path, error=repr(failed.cause))
                    raise KafkaError(ErrorCode.unknown_server_error) from None
                if isinstance(failed.cause, NoNode) and write.kind == "create":
                    await self.zk.ensure_path(path.rsplit("/", 1)[0])  # the resource type's znode went away
            await asyncio.sleep(RETRY_BACKOFF_S + random.random() * RETRY_JITTER_S)
        self.log.error("ACL write kept losing races", path=path)
        raise KafkaError(ErrorCode.unknown_server_error)

    async def _settle(self, cache: AclView, expected: dict[ResourcePattern, tuple[Outcome, tuple]]) -> None:
        """Wait until this broker's ACL cache shows what was written (and, with fauxka.admin.blocking=cluster,
        every live broker's; REQUEST_TIMED_OUT for what they did not show in time)."""
        if not expected:
            return
        await cache.wait_until(lambda: all(cache.entries(p) == e for p, (_, e) in expected.items()), CACHE_WAIT_S)
        await self.waits.wait_cluster([str(p) for p in expected], CACHE_WAIT_S, {str(p): o for p, (o, _) in expected.items()})

    def _audit(self, caller: Caller, binding: AclBinding, action: str, outcome: Outcome, latency_ms: float) -> None:
        pattern, entry = binding.pattern, binding.entry
        self.audit.record(caller, resource_type="ACL", resource_name=str(binding), action=action, validate_only=False,
                          error_code=outcome.error_code, error_message=outcome.error_message, latency_ms=latency_ms,
                          acl={"resource_type": pattern.resource_type.name, "resource_name": pattern.name,
                               "pattern_type": pattern.pattern_type.name, "principal": entry.principal,
                               "host": entry.host, "operation": entry.operation.name,
                               "permission_type": entry.permission_type.name})
