"""Every broker's copy of the ACLs, fed only by ZooKeeper watches on Kafka's ACL znodes.

One children watch per store and resource type (/kafka-acl/Topic, /kafka-acl-extended/prefixed/Group,
...) and one data watch per resource znode. Kafka's brokers follow the change notifications
(/kafka-acl-changes) instead; watching the znodes themselves also sees writes that announce nothing.
"""

import asyncio
from typing import Any, Callable

from fauxka.zkstore.acl_znodes import STORES, decode_acls, resource_path, type_path
from fauxka.model.acl_model import (RESOURCE_TYPES, WILDCARD_RESOURCE, AccessControlEntry, AclBinding,
                                  AclBindingFilter, PatternType, ResourcePattern, ResourceType, kafka_order)
from fauxka.zkstore import Stat, ZkStore
from fauxka.zkstore.watch_set import WatchSet

Entries = tuple[AccessControlEntry, ...]


class AclCache:
    def __init__(self, zk: ZkStore, log: Any):
        self._zk = zk
        self._log = log
        # (pattern type, resource type) -> resource name -> its entries (never empty)
        self._by_type: dict[tuple[PatternType, ResourceType], dict[str, Entries]] = {
            (p, t): {} for p in STORES for t in RESOURCE_TYPES}
        self._watches = WatchSet(zk)
        self._waiters: set[asyncio.Event] = set()

    # --- life cycle ----------------------------------------------------------

    def start(self) -> None:
        for pattern_type in STORES:
            for resource_type in RESOURCE_TYPES:
                self._watch("children", type_path(pattern_type, resource_type),
                            lambda v, p=pattern_type, t=resource_type: self._on_names(p, t, v))

    async def wait_synced(self, timeout_s: float) -> None:
        await self._watches.wait_synced(timeout_s)

    def stop(self) -> None:
        self._watches.cancel_all()
        for waiter in self._waiters:
            waiter.set()

    # --- queries -------------------------------------------------------------

    def entries(self, pattern: ResourcePattern) -> Entries:
        return self._by_type.get((pattern.pattern_type, pattern.resource_type), {}).get(pattern.name, ())

    def patterns(self) -> list[ResourcePattern]:
        """Every resource pattern holding ACLs, in Kafka's ResourceOrdering."""
        found = [ResourcePattern(t, name, p) for (p, t), names in self._by_type.items() for name in names]
        return sorted(found, key=kafka_order)

    def bindings(self, binding_filter: AclBindingFilter | None = None) -> list[AclBinding]:
        """AclAuthorizer.acls(filter): every binding the filter matches."""
        found = []
        for pattern in self.patterns():
            for entry in self.entries(pattern):
                binding = AclBinding(pattern, entry)
                if binding_filter is None or binding_filter.matches(binding):
                    found.append(binding)
        return found

    def matching(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        """AclAuthorizer.matchingAcls: the entries of the prefixed patterns `name` starts with, of the
        literal wildcard "*" and of the literal `name` itself."""
        prefixed = self._by_type.get((PatternType.PREFIXED, resource_type), {})
        literal = self._by_type.get((PatternType.LITERAL, resource_type), {})
        found: list[AccessControlEntry] = []
        if len(prefixed) < len(name):
            for prefix, entries in prefixed.items():
                if name.startswith(prefix):
                    found += entries
        else:
            for end in range(len(name), 0, -1):
                found += prefixed.get(name[:end], ())
        found += literal.get(WILDCARD_RESOURCE, ())
        found += literal.get(name, ())
        return found

    async def wait_until(self, check: Callable[[], bool], timeout_s: float) -> bool:
        """Wait (event-driven) until `check()` holds or the timeout passes; whether it holds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        woken = asyncio.Event()
        self._waiters.add(woken)
        try:
            while not check():
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return False
                woken.clear()
                try:
                    async with asyncio.timeout(remaining):
                        await woken.wait()
                except TimeoutError:
                    return check()
            return True
        finally:
            self._waiters.discard(woken)

    # --- watches ---------------------------------------------------------------

    def _watch(self, kind: str, path: str, callback: Callable[[Any], None]) -> None:
        self._watches.add(kind, path, callback)

    def _on_names(self, pattern_type: PatternType, resource_type: ResourceType, children: list[str] | None) -> None:
        names = set(children or ())
        held = self._by_type[(pattern_type, resource_type)]
        for gone in [n for n in self._watched_names(pattern_type, resource_type) if n not in names]:
            path = resource_path(ResourcePattern(resource_type, gone, pattern_type))
            self._watches.remove(path)
            if held.pop(gone, None) is not None:
                self._changed()
        for name in names:
            pattern = ResourcePattern(resource_type, name, pattern_type)
            self._watch("data", resource_path(pattern), lambda v, r=pattern: self._on_resource(r, v))

    def _watched_names(self, pattern_type: PatternType, resource_type: ResourceType) -> list[str]:
        prefix = type_path(pattern_type, resource_type) + "/"
        return [path[len(prefix):] for path in self._watches.paths(prefix)]

    def _on_resource(self, pattern: ResourcePattern, value: tuple[bytes, Stat] | None) -> None:
        held = self._by_type[(pattern.pattern_type, pattern.resource_type)]
        try:
            entries = tuple(decode_acls(value[0])) if value else ()
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self._log.error("bad ACL znode", path=resource_path(pattern), error=repr(exc))
            return
        if entries:
            held[pattern.name] = entries
        else:
            held.pop(pattern.name, None)
        self._changed()

    def _changed(self) -> None:
        for waiter in self._waiters:
            waiter.set()
