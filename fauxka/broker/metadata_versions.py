"""The metadata cache's side that knows how far it, and every other broker, has applied the
controller's writes (fauxka.admin.blocking=cluster: an admin write answers once every live broker
has applied it).

Every controller write also bumps /fauxka/metadata_version (zkstore.paths.METADATA_VERSION: its
znode version is the write's number). Reading it, this cache knows the newest write; once kazoo has
handed over every event received before that read and their re-reads are handled (a barrier, then
no read pending), everything up to it is in the cache: the version is applied here, and the broker
publishes it in its ephemeral /fauxka/applied/<id>. What every broker published is watched too.

A mixin of fauxka/broker/metadata_cache.py's MetadataCache (as metadata_pushed.py is): it uses the
cache's ZooKeeper store, watches and events.
"""

from typing import Any, Callable

from fauxka.zkstore import Stat, ZkStore
from fauxka.zkstore import paths as zp


class MetadataVersions:
    # the MetadataCache's parts this side uses
    _zk: ZkStore
    _watch: Callable[[str, str, Callable[[Any], None]], None]
    _unwatch: Callable[[str], None]
    _emit: Callable[[tuple], None]

    def _init_versions(self) -> None:
        self.seen_version = -1  # newest /fauxka/metadata_version read
        self.applied_version = -1  # newest version whose changes this cache has all applied
        self._barrier_version = -1
        self.applied_by_broker: dict[int, int] = {}  # what every broker published

    def _watch_versions(self) -> None:
        self._watch("data", zp.METADATA_VERSION, self._on_metadata_version)
        self._watch("children", zp.APPLIED, self._on_applied_ids)
        self._zk.on_quiet(self._maybe_applied)

    def _on_metadata_version(self, value: tuple[bytes, Stat] | None) -> None:
        if value is None:
            return
        version = value[1].version
        self.seen_version = max(self.seen_version, version)
        # Once kazoo has handed over every event received before this read, and their
        # re-reads are all handled, everything up to `version` is in this cache.
        self._zk.barrier(lambda: self._barrier_passed(version))

    def _barrier_passed(self, version: int) -> None:
        self._barrier_version = max(self._barrier_version, version)
        self._maybe_applied()

    def _maybe_applied(self) -> None:
        if self._zk.pending_reads == 0 and self._barrier_version > self.applied_version:
            self.applied_version = self._barrier_version
            self._emit(("applied_local", self.applied_version))

    def _on_applied_ids(self, children: list[str] | None) -> None:
        ids = {int(c) for c in children or () if c.isdigit()}
        for gone in set(self.applied_by_broker) - ids:
            self._unwatch(zp.applied_path(gone))
            del self.applied_by_broker[gone]
        for broker_id in ids:
            self._watch("data", zp.applied_path(broker_id), lambda v, b=broker_id: self._on_applied(b, v))

    def _on_applied(self, broker_id: int, value: tuple[bytes, Stat] | None) -> None:
        try:
            self.applied_by_broker[broker_id] = int(value[0]) if value else -1
        except ValueError:
            return
        self._emit(("applied", broker_id))
