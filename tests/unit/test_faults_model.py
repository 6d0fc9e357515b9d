"""fauxka/model/faults.py: validation, encoding and which requests a fault hits."""

import pytest

from fauxka.model.errors import ErrorCode
from fauxka.model.faults import (Fault, FaultError, RequestFacts, Scope, affects, consumed, decode, encode, error_code,
                          first_match, matches)

NOW = 1_000_000


def facts(**kw):
    base = dict(broker=1, api_key=0, version=9, client_id="app", principal="User:ANONYMOUS",
                partitions=(("t", 0), ("t", 1)))
    return RequestFacts(**{**base, **kw})


def error_fault(scope=Scope(), **kw):
    return Fault("f1", "error", scope, error=int(ErrorCode.not_leader_or_follower), **kw)


def test_error_names_and_numbers():
    assert error_code("NOT_LEADER_OR_FOLLOWER") == ErrorCode.not_leader_or_follower
    assert error_code("not_coordinator") == ErrorCode.not_coordinator
    assert error_code("6") == ErrorCode.not_leader_or_follower
    with pytest.raises(FaultError, match="unknown error name"):
        error_code("NO_SUCH_ERROR")
    with pytest.raises(FaultError, match="unknown error code"):
        error_code(9999)


@pytest.mark.parametrize("bad, message", [
    (dict(kind="explode"), "unknown fault kind"),
    (dict(kind="error"), "needs an error code"),
    (dict(kind="throttle"), "throttle_ms"),
    (dict(kind="delay"), "delay_ms"),
    (dict(kind="replication"), "follower"),
    (dict(kind="close", count=0), "count"),
    (dict(kind="close", scope=Scope(partition=1)), "needs a topic"),
    (dict(kind="close", scope=Scope(min_version=5, max_version=3)), "min_version"),
])
def test_bad_faults_are_refused(bad, message):
    with pytest.raises(FaultError, match=message):
        Fault("x", **bad)


def test_encode_decode_round_trip():
    fault = error_fault(Scope(broker=2, api_key=0, topic="t", partition=1, client_id="c"), count=3, expires_ms=5)
    assert decode(encode(fault)) == fault


def test_scope_fields_each_narrow():
    assert matches(error_fault(), facts(), NOW)
    assert not matches(error_fault(Scope(broker=2)), facts(), NOW)
    assert not matches(error_fault(Scope(api_key=1)), facts(), NOW)
    assert matches(error_fault(Scope(api_key=0, min_version=9, max_version=9)), facts(), NOW)
    assert not matches(error_fault(Scope(api_key=0, min_version=10)), facts(), NOW)
    assert not matches(error_fault(Scope(max_version=8)), facts(), NOW)
    assert not matches(error_fault(Scope(client_id="other")), facts(), NOW)
    assert not matches(error_fault(Scope(principal="User:bob")), facts(), NOW)
    assert matches(error_fault(Scope(topic="t", partition=1)), facts(), NOW)
    assert not matches(error_fault(Scope(topic="t", partition=7)), facts(), NOW)
    assert not matches(error_fault(Scope(topic="u")), facts(), NOW)


def test_partition_scope_affects_only_its_partition():
    scope = Scope(topic="t", partition=1)
    assert [tp for tp in (("t", 0), ("t", 1)) if affects(scope, tp)] == [("t", 1)]
    assert affects(Scope(topic="t"), ("t", 0)) and affects(Scope(), ("x", 3))


def test_cluster_traffic_is_spared_unless_named():
    follower = facts(api_key=1, replica_id=2)
    assert not matches(error_fault(), follower, NOW)
    assert matches(error_fault(Scope(api_key=1)), follower, NOW)
    assert not matches(error_fault(), facts(api_key=56, partitions=()), NOW)


def test_replication_fault_hits_only_its_followers_fetches():
    fault = Fault("r", "replication", Scope(broker=2, topic="t"), delay_ms=-1)
    assert matches(fault, facts(api_key=1, replica_id=2), NOW)
    assert not matches(fault, facts(api_key=1, replica_id=3), NOW)
    assert not matches(fault, facts(api_key=1), NOW)  # a consumer
    assert not matches(fault, facts(api_key=1, replica_id=2, partitions=(("u", 0),)), NOW)
    # an incremental fetch naming none of t's partitions, whose session at the leader holds one
    assert matches(fault, facts(api_key=1, replica_id=2, partitions=(), in_session=(("t", 0),)), NOW)
    assert not matches(fault, facts(api_key=1, replica_id=2, partitions=(), in_session=(("u", 0),)), NOW)


def test_count_and_duration_bound_a_fault():
    fault = error_fault(count=2)
    once = consumed(fault)
    assert once.count == 1 and consumed(once) is None
    assert consumed(error_fault()) == error_fault()
    assert not matches(error_fault(expires_ms=NOW), facts(), NOW)
    assert matches(error_fault(expires_ms=NOW + 1), facts(), NOW)


def test_oldest_fault_wins():
    old = Fault("b", "close", created_ms=1)
    new = Fault("a", "delay", delay_ms=5, created_ms=2)
    assert first_match([new, old], facts(), NOW) is old
    assert first_match([], facts(), NOW) is None


def test_describe_names_kind_and_scope():
    text = error_fault(Scope(topic="t"), count=1).describe()
    assert "NOT_LEADER_OR_FOLLOWER" in text and "topic=t" in text and "count=1" in text


def test_leader_fault_is_an_action_not_a_request_fault():
    with pytest.raises(FaultError, match="leader fault needs"):
        Fault("l", "leader", Scope(topic="t"))
    fault = Fault("l", "leader", Scope(broker=2, topic="t", partition=0))
    assert not matches(fault, facts(), NOW)


def test_elect_given_moves_to_a_live_in_sync_replica_only():
    from fauxka.controller.leader_election import Partition, elect_given
    from fauxka.zkstore.paths import PartitionState

    p = Partition("t", 0, [1, 2, 3], PartitionState(1, 4, 1, [1, 2], 7))
    moved = elect_given(p, 2, {1, 2, 3}, 5)
    assert (moved.leader, moved.leader_epoch, moved.controller_epoch, moved.isr, moved.zk_version) == (2, 5, 5, [1, 2], 7)
    assert elect_given(p, 3, {1, 2, 3}, 5) is None  # not in sync
    assert elect_given(p, 2, {1, 3}, 5) is None  # not live
    assert elect_given(p, 1, {1, 2, 3}, 5) is None  # leads already
    assert elect_given(p, 4, {1, 2, 3, 4}, 5) is None  # not a replica


def test_link_fault_cuts_both_directions_between_two_brokers_only():
    with pytest.raises(FaultError, match="two different brokers"):
        Fault("k", "link", Scope(broker=1), peer=1)
    fault = Fault("k", "link", Scope(broker=1), peer=2)
    assert matches(fault, facts(broker=1, from_broker=2, api_key=1, replica_id=2), NOW)
    assert matches(fault, facts(broker=2, from_broker=1, api_key=58, partitions=()), NOW)
    assert not matches(fault, facts(broker=1, from_broker=3), NOW)
    assert not matches(fault, facts(broker=1), NOW)  # a client
    assert decode(encode(fault)) == fault


def test_sending_broker_from_inter_broker_client_ids():
    from fauxka.broker.fault_injection import sending_broker

    assert sending_broker("fauxka-replica-fetcher-3") == 3
    assert sending_broker("fauxka-forwarder-12") == 12
    assert sending_broker("rdkafka") == -1 and sending_broker(None) == -1
    assert sending_broker("fauxka-forwarder-x") == -1


def test_storage_fault_hits_the_failed_brokers_partitions_and_its_follower_fetches():
    fault = Fault("s", "storage", Scope(broker=2, topic="t"))
    assert matches(fault, facts(broker=2), NOW)  # a client's Produce at the failed broker
    assert not matches(fault, facts(broker=1), NOW)  # elsewhere the log is fine
    assert matches(fault, facts(broker=1, api_key=1, replica_id=2), NOW)  # the failed replica fetching
    assert not matches(fault, facts(broker=1, api_key=1, replica_id=3), NOW)
    assert not matches(fault, facts(broker=2, api_key=3, partitions=()), NOW)  # Metadata is served
    assert not matches(Fault("s", "storage", Scope(broker=2)), facts(broker=2, api_key=0, partitions=()), NOW)
    with pytest.raises(FaultError, match="follower"):
        Fault("s", "storage")


def test_zookeeper_fault_is_an_action_bounded_by_time_not_count():
    with pytest.raises(FaultError, match="not a count"):
        Fault("z", "zookeeper", Scope(broker=2), count=1)
    fault = Fault("z", "zookeeper", Scope(broker=2))
    facts = RequestFacts(broker=2, api_key=0, version=9, client_id="c", principal="User:ANONYMOUS",
                         partitions=(("t", 0),))
    assert not matches(fault, facts, 0)  # it cuts the broker's own link, no request of a client
    assert decode(encode(fault)) == fault
