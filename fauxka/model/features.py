"""Feature versioning (KIP-584) as a Kafka 3.9 broker in ZooKeeper mode has it, free of sockets.

Sources (3.9): BrokerFeatures.defaultSupportedFeatures (metadata.version 1..21 = 3.0-IV1..3.9-IV0,
kraft.version 0..1; transaction.version and group.version have no production level above 0 in
3.9, so they are left out), defaultFinalizedFeatures (kraft.version at 0, the others at their
highest), FinalizedFeatures (ZK mode never shows metadata.version as finalized),
ApiVersionsResponse (level-0 finalized features left out; supported features with a minimum of 0
left out below ApiVersions v4, KAFKA-17492) and KafkaController.validateFeatureUpdate /
newFinalizedVersionOrIncompatibilityError (UpdateFeatures' rules and messages).
"""

from collections.abc import Mapping

from .errors import ErrorCode
from .topic_names import java_string_hash

METADATA_VERSION = "metadata.version"
SUPPORTED: dict[str, tuple[int, int]] = {METADATA_VERSION: (1, 21), "kraft.version": (0, 1)}
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


def java_hash_map_order(names: list[str]) -> list[str]:
    """Iteration order of a java.util.HashMap (default capacity) or a small Scala mutable.HashMap
    of these string keys: by bucket of the spread hash, then in insertion order."""
    def bucket(name: str) -> int:
        h = java_string_hash(name)
        capacity = 16
        while len(names) > capacity * 3 // 4:
            capacity *= 2
        return (h ^ (h >> 16)) & (capacity - 1)
    return sorted(dict.fromkeys(names), key=bucket)


def default_finalized() -> dict[str, int]:
    return {name: (0 if name == "kraft.version" else high) for name, (_, high) in SUPPORTED.items()}


def registration_features() -> dict:
    """The "features" of a ZK-mode broker registration (BrokerFeatures.createDefaultFeatureMap)."""
    return {name: {"min_version": low, "max_version": high} for name, (low, high) in SUPPORTED.items()}


def supported_for_api_versions(version: int) -> list[dict]:
    return [{"name": n, "min_version": SUPPORTED[n][0], "max_version": SUPPORTED[n][1]}
            for n in java_hash_map_order(list(SUPPORTED)) if version >= 4 or SUPPORTED[n][0] != 0]


def finalized_for_api_versions(finalized: Mapping[str, int]) -> list[dict]:
    shown = [n for n in finalized if n != METADATA_VERSION and finalized[n] != 0]
    return [{"name": n, "min_version_level": finalized[n], "max_version_level": finalized[n]}
            for n in java_hash_map_order(shown)]


def incompatible(broker_features: Mapping, finalized: Mapping[str, int]) -> bool:
    """BrokerFeatures.hasIncompatibleFeatures: a finalized level outside what a broker registered."""
    for name, level in finalized.items():
        supported = broker_features.get(name)
        if not isinstance(supported, Mapping):
            return True
        if not supported.get("min_version", 0) <= level <= supported.get("max_version", -1):
            return True
    return False


def validate_update(feature: str, level: int, upgrade_type: int, existing: int | None,
                    brokers: list[Mapping]) -> tuple[bool, int | None] | tuple[ErrorCode, str]:
    """One FeatureUpdate: (True, new level), (True, None) to delete the feature, or (error, message)."""
    if not feature:
        return ErrorCode.invalid_request, "Feature name can not be empty."
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return ErrorCode.invalid_request, "Received unknown upgrade type."
    if level < 1 and upgrade_type != UPGRADE:  # a delete request
        if existing is None:
            return ErrorCode.invalid_request, "Can not delete non-existing finalized feature."
        return True, None
    if level < 1:
        return (ErrorCode.invalid_request, f"Can not provide versionLevel: {level} less than 1 without setting "
                                           "the SAFE downgradeType in the request.")
    if existing is not None:
        if level == existing:
            verb = "downgrade" if upgrade_type == SAFE_DOWNGRADE else "upgrade"
            return (ErrorCode.invalid_request, f"Can not {verb} a finalized feature from existing "
                                               f"versionLevel:{existing} to the same value.")
        if level < existing and upgrade_type != SAFE_DOWNGRADE:
            return (ErrorCode.invalid_request, f"Can not downgrade finalized feature from existing "
                                               f"versionLevel:{existing} to provided versionLevel:{level} without "
                                               "setting the downgradeType to SAFE in the request.")
        if upgrade_type != UPGRADE and level > existing:
            return (ErrorCode.invalid_request, f"When the downgradeType is set to SAFE in the request, the provided "
                                               f"versionLevel:{level} can not be greater than existing "
                                               f"versionLevel:{existing}.")
    supported = SUPPORTED.get(feature)
    if supported is None:
        return (ErrorCode.invalid_request,
                "Could not apply finalized feature update because the provided feature is not supported.")
    if not supported[0] <= level <= supported[1]:
        return (ErrorCode.invalid_request, f"Could not apply finalized feature update because the provided "
                                           f"versionLevel:{level} is lower than the supported "
                                           f"minVersion:{supported[0]}.")
    if any(incompatible(b, {feature: level}) for b in brokers):
        return (ErrorCode.invalid_request, "Could not apply finalized feature update because brokers were found "
                                           "to have incompatible versions for the feature.")
    return True, level
