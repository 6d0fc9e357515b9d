"""Feature versioning (KIP-584) as a ZK-mode Kafka 3.9 cluster shows it: ApiVersions' supported and
finalized features (kafka-python's describe_features), UpdateFeatures' answers and the /feature
znode. Its own cluster: an accepted update changes what every broker advertises."""

import json

import pytest

from tests.admin_helpers import send
from tests.harness import wait_for


def features_of(address: str, version: int = 4):
    response = send(address, 18, version, {"client_software_name": "t", "client_software_version": "1"}
                    if version >= 3 else {})
    return ([(f.name, f.min_version, f.max_version) for f in response.supported_features],
            [(f.name, f.min_version_level, f.max_version_level) for f in response.finalized_features],
            response.finalized_features_epoch)


def update(address: str, updates: list[tuple[str, int, int]], version: int = 1):
    """UpdateFeatures: (top-level code, message, [(feature, code, message)])."""
    if version == 0:
        items = [{"feature": f, "max_version_level": level, "allow_downgrade": kind == 2} for f, level, kind in updates]
        values = {"timeout": 10000, "feature_updates": items}
    else:
        items = [{"feature": f, "max_version_level": level, "upgrade_type": kind} for f, level, kind in updates]
        values = {"timeout": 10000, "feature_updates": items, "validate_only": False}
    response = send(address, 57, version, values)
    return (int(response.error_code), response.error_message,
            sorted((r.feature, int(r.error_code), r.error_message) for r in response.results))


@pytest.mark.disruptive
def test_features_are_advertised_and_updated_as_kafka_39_in_zk_mode(make_cluster):
    from kafka.admin import KafkaAdminClient

    cluster = make_cluster(2)
    znode = wait_for(lambda: cluster.zk_get("/feature"), 20, what="/feature created by the controller")
    assert json.loads(znode) == {"features": {"metadata.version": {"max_version_level": 21},
                                              "kraft.version": {"max_version_level": 0}}, "version": 2, "status": 1}
    for broker in cluster.brokers:
        address = cluster.address_of(broker)
        wait_for(lambda a=address: features_of(a)[2] == 0, 20, what="the feature epoch")
        assert features_of(address) == ([("kraft.version", 0, 1), ("metadata.version", 1, 21)], [], 0)
        assert features_of(address, 3) == ([("metadata.version", 1, 21)], [], 0)  # no minimum 0 below v4
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    try:
        assert admin.describe_features() == {"kraft.version": {"supported": (0, 1)},
                                             "metadata.version": {"supported": (1, 21)}}
    finally:
        admin.close()
    invalid = 42
    for address in (cluster.controller_address(), cluster.non_controller_address()):  # forwarded too
        assert update(address, [("", 1, 1), ("foo", 1, 1), ("kraft.version", 5, 1), ("metadata.version", 0, 1),
                                ("bar", 0, 2), ("baz", 1, 9)]) == (0, None, sorted([
            ("", invalid, "Feature name can not be empty."),
            ("foo", invalid, "Could not apply finalized feature update because the provided feature is not supported."),
            ("kraft.version", invalid, "Could not apply finalized feature update because the provided versionLevel:5 "
                                       "is lower than the supported minVersion:0."),
            ("metadata.version", invalid, "Can not provide versionLevel: 0 less than 1 without setting the SAFE "
                                          "downgradeType in the request."),
            ("bar", invalid, "Can not delete non-existing finalized feature."),
            ("baz", invalid, "Received unknown upgrade type."),
        ]))
    assert json.loads(cluster.zk_get("/feature"))["features"]["kraft.version"] == {"max_version_level": 0}
    # kraft.version 0 -> 1: accepted, every broker advertises it with the new epoch
    assert update(cluster.non_controller_address(), [("kraft.version", 1, 1)], version=0) == \
        (0, None, [("kraft.version", 0, None)])
    for broker in cluster.brokers:
        wait_for(lambda b=broker: features_of(cluster.address_of(b))[1:] == ([("kraft.version", 1, 1)], 1), 20,
                 what=f"broker {broker} advertising kraft.version 1")
    # Kafka's ZK controller drops metadata.version from what it rewrites (its cache never holds it)
    assert json.loads(cluster.zk_get("/feature"))["features"] == {"kraft.version": {"max_version_level": 1}}
    assert update(cluster.controller_address(), [("kraft.version", 1, 1), ("kraft.version", 0, 1)])[2][0] == \
        ("kraft.version", invalid, "Can not upgrade a finalized feature from existing versionLevel:1 to the same value.")
    assert update(cluster.controller_address(), [("kraft.version", 0, 1)]) == (0, None, [(
        "kraft.version", invalid, "Can not provide versionLevel: 0 less than 1 without setting the SAFE downgradeType "
                                  "in the request.")])
    assert update(cluster.controller_address(), [("kraft.version", 0, 2)]) == (0, None, [("kraft.version", 0, None)])
    wait_for(lambda: features_of(cluster.address_of(1))[1:] == ([], 2), 20, what="kraft.version deleted")
