"""Finalized features (KIP-584) on the active controller, as Kafka 3.9's ZK-mode controller keeps
them in /feature: created enabled with the default finalized levels at failover when absent
(KafkaController.enableFeatureVersioning), rewritten by UpdateFeatures
(processFeatureUpdatesWithActiveController: each update checked on its own, the znode written
once with every valid one, then the controller waits until its cache shows the new epoch;
a failed write turns every valid update into FEATURE_UPDATE_FAILED). Kafka's ZK controller
ignores validate_only; so does this one. The rules are fauxka/model/features.py's.
"""

from typing import Any

from fauxka.model import features as rules
from fauxka.model.errors import ErrorCode
from fauxka.zkstore import MultiFailed, NodeExists, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from .broker_parts import CacheWaits, Metadata
from .election import ControllerElection


class FeatureController:
    def __init__(self, zk: ZkStore, cache: Metadata, writer: FencedWriter, election: ControllerElection,
                 purgatory: CacheWaits, log: Any):
        self._zk = zk
        self._cache = cache
        self._writer = writer
        self._election = election
        self._purgatory = purgatory
        self._log = log.bind(component="features")

    async def ensure(self) -> None:
        """enableFeatureVersioning: create /feature if absent; a disabled one is enabled, emptied."""
        try:
            value = await self._zk.get(zp.FEATURE)
            if value is None:
                await self._writer.write([Op.create(zp.FEATURE, zp.encode_feature(rules.default_finalized()))])
            elif zp.decode_feature(value[0])[0] != zp.FEATURE_ENABLED:
                await self._writer.write([Op.set(zp.FEATURE, zp.encode_feature({}))])
        except MultiFailed as failed:
            if not isinstance(failed.cause, NodeExists):
                self._log.warning("feature znode not written", error=repr(failed.cause))
        except (ControllerMoved, ZkUnavailable, ValueError) as exc:
            self._log.warning("feature versioning not set up", error=repr(exc))

    async def update(self, updates: list[tuple[str, int, int]], timeout_ms: int) -> dict[str, tuple[int, str | None]]:
        """(feature, level, upgrade type) each: by feature, (error code, message)."""
        cache = self._cache
        existing = {n: v for n, v in cache.finalized_features.items() if n != rules.METADATA_VERSION}
        target = dict(existing)
        brokers = [reg.features for reg in cache.brokers.values()]
        errors: dict[str, tuple[int, str | None]] = {}
        for feature, level, upgrade_type in updates:
            verdict = rules.validate_update(feature, level, upgrade_type, existing.get(feature), brokers)
            if verdict[0] is True:
                if verdict[1] is None:
                    target.pop(feature, None)
                else:
                    target[feature] = verdict[1]
                errors[feature] = (ErrorCode.none, None)
            else:
                errors[feature] = (verdict[0], verdict[1])
        if target != existing:
            try:
                (stat,) = await self._writer.write([Op.set(zp.FEATURE, zp.encode_feature(target))])
                shown = await self._purgatory.wait(
                    {zp.FEATURE}, lambda keys: keys if cache.features_epoch >= stat.version else set(),
                    max(timeout_ms, 0) / 1000)
                if not shown:
                    raise TimeoutError(f"feature epoch {stat.version} not seen in time")
            except ControllerMoved as exc:
                self._election.resign(str(exc))
                self._failed(errors, exc)
            except (MultiFailed, ZkUnavailable, TimeoutError) as exc:
                self._failed(errors, exc)
        return {name: errors[name] for name in rules.java_hash_map_order(list(errors))}

    def _failed(self, errors: dict, exc: BaseException) -> None:
        self._log.warning("processing of feature updates failed", error=repr(exc))
        for name, (code, _) in list(errors.items()):
            if code == ErrorCode.none:
                errors[name] = (ErrorCode.feature_update_failed,
                                "Unable to update finalized features due to an unexpected server error.")
