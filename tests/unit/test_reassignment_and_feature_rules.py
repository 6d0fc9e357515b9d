"""fauxka/model/reassignment.py and fauxka/model/features.py: Kafka 3.9's ZK-mode rules, without sockets."""

from fauxka.model import features as f
from fauxka.model import reassignment as r
from fauxka.model.errors import ErrorCode
from fauxka.zkstore import paths as zp


def test_reassign_to_puts_the_target_first_then_the_origin():
    moving = r.Assignment([1, 2, 3]).reassign_to([3, 4, 2])
    assert moving == r.Assignment([3, 4, 2, 1], adding=[4], removing=[1])  # KafkaController's own example
    assert (moving.origin, moving.target, moving.reassigning) == ([3, 2, 1], [3, 4, 2], True)
    replaced = moving.reassign_to([5])  # a new target replaces the running one, from the same origin
    assert replaced == r.Assignment([5, 3, 2, 1], adding=[5], removing=[3, 2, 1])


def test_build_cancels_back_to_the_origin_and_refuses_cancelling_nothing():
    moving = r.Assignment([2, 3, 1], adding=[3], removing=[1])
    assert r.build(moving, None) == r.Assignment([2, 1])
    assert r.build(r.Assignment([1, 2]), None) is None
    assert r.build(r.Assignment([1, 2]), [1, 2]) == r.Assignment([1, 2])  # nothing to move: not reassigning


def test_validate_in_kafkas_order_and_words():
    current, live = r.Assignment([1, 2]), {1, 2, 3}
    assert r.validate(current, [], live) == (ErrorCode.invalid_replica_assignment,
                                             "Empty replica list specified in partition reassignment.")
    assert r.validate(current, [-1, -1], live)[1] == \
        "Duplicate replica ids in partition reassignment replica list: ArrayBuffer(-1, -1)"
    assert r.validate(current, [-1], live)[1] == "Invalid broker id in replica list: ArrayBuffer(-1)"
    assert r.validate(current, [1, 7, 8], live)[1] == ("Replica assignment has brokers that are not alive. Replica "
                                                       "list: ArrayBuffer(7, 8), live broker list: Set(1, 2, 3)")
    assert r.validate(current, [2, 3], live) is None
    assert r.validate(r.Assignment([1, 9]), [9, 1], live) is None  # only the added replicas must be live


def test_complete_and_the_reassignment_leader():
    moving = r.Assignment([2, 3, 1], adding=[3], removing=[1])
    assert not r.complete(moving, [1, 2])
    assert r.complete(moving, [1, 2, 3])
    assert r.reassign_leader([2, 3], isr=[1, 3], live={1, 2, 3}) == 3
    assert r.reassign_leader([2, 3], isr=[1, 3], live={1, 2}) is None


def test_topic_znode_round_trips_adding_and_removing_replicas():
    written = zp.TopicAssignment(None, {0: [2, 3, 1], 1: [1, 2]}, {0: [3]}, {0: [1]})
    data = zp.encode_topic(written)
    assert b'"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}' in data
    assert zp.decode_topic(data) == written
    assert zp.decode_topic(data).reassigning() == {0}
    assert zp.decode_topic(zp.encode_topic(zp.TopicAssignment(None, {0: [1]}))).reassigning() == set()


def test_feature_updates_as_kafkas_zk_controller():
    brokers = [f.registration_features()]
    assert f.validate_update("kraft.version", 1, f.UPGRADE, 0, brokers) == (True, 1)
    assert f.validate_update("kraft.version", 0, f.SAFE_DOWNGRADE, 1, brokers) == (True, None)
    assert f.validate_update("kraft.version", 1, f.SAFE_DOWNGRADE, 0, brokers)[1] == (
        "When the downgradeType is set to SAFE in the request, the provided versionLevel:1 can not be greater "
        "than existing versionLevel:0.")
    assert f.validate_update("metadata.version", 20, f.UNSAFE_DOWNGRADE, 21, brokers)[1] == (
        "Can not downgrade finalized feature from existing versionLevel:21 to provided versionLevel:20 without "
        "setting the downgradeType to SAFE in the request.")
    assert f.validate_update("metadata.version", 21, f.UPGRADE, None, [{}])[1].endswith(
        "brokers were found to have incompatible versions for the feature.")


def test_api_versions_features_leave_out_what_kafka_leaves_out():
    assert [x["name"] for x in f.supported_for_api_versions(3)] == ["metadata.version"]
    assert [x["name"] for x in f.supported_for_api_versions(4)] == ["kraft.version", "metadata.version"]
    assert f.finalized_for_api_versions(f.default_finalized()) == []
    assert zp.decode_feature(zp.encode_feature({"kraft.version": 1})) == (1, {"kraft.version": 1})
