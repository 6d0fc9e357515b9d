"""Kafka's quota arithmetic without sockets: entity resolution, sampled rates, throttle times, the
KIP-599 token bucket, and the broker's managers over an in-memory config source."""

import pytest

from fauxka.broker.quotas import ClientQuotaManager, MutationQuotaManager
from fauxka.model.quota_math import DEFAULT, Rate, TokenBucket, candidates, resolve, throttle_ms


class Configs:
    def __init__(self, entities):
        self.entities = entities

    def get(self, entity):
        return self.entities.get(entity)


def test_resolution_order_is_kafkas():
    assert candidates("alice", "app") == [("alice", "app"), ("alice", DEFAULT), ("alice", None), (DEFAULT, "app"),
                                          (DEFAULT, DEFAULT), (DEFAULT, None), (None, "app"), (None, DEFAULT)]
    entities = {(None, DEFAULT): {"request_percentage": "50"}, ("alice", None): {"producer_byte_rate": "1024"},
                (DEFAULT, None): {"request_percentage": "20"}}
    assert resolve("alice", "app", "producer_byte_rate", entities.get) == (("alice", None), 1024.0)
    assert resolve("alice", "app", "request_percentage", entities.get) == ((DEFAULT, None), 20.0)
    assert resolve("bob", "x", "consumer_byte_rate", entities.get) is None


def test_rate_counts_at_least_num_minus_one_windows():
    rate = Rate(11, 1000)
    rate.record(1000, 0)
    assert rate.window_size_ms(0) == 10_000  # 10 full windows assumed at the start
    assert rate.measure(0) == pytest.approx(100.0)
    rate.record(1000, 15_000)  # the first sample has left the 11 s horizon
    assert rate.measure(15_000) == pytest.approx(100.0)


def test_throttle_time_is_the_excess_over_the_bound_times_the_window():
    rate = Rate(11, 1000)
    rate.record(2000, 0)  # 200/s over a 10 s window, bound 100/s
    assert throttle_ms(rate, 100, 0) == 10_000
    rate2 = Rate(11, 1000)
    rate2.record(500, 0)
    assert throttle_ms(rate2, 100, 0) == 0


def test_token_bucket():
    bucket = TokenBucket(quota=2, burst=2 * 11)  # 2 partitions/s, 11 one-second samples
    assert not bucket.exceeded(0)
    bucket.record(30, 0)  # 22 - 30 = -8
    assert bucket.exceeded(0)
    assert bucket.throttle_ms(0) == 4000
    assert not bucket.exceeded(4000)
    assert bucket.throttle_ms(4000) == 0


def test_request_quota_manager_throttles_one_client_only():
    configs = Configs({(None, "busy"): {"request_percentage": "1"}})
    manager = ClientQuotaManager("request_percentage", configs, 11, 1)
    assert manager.record("User:ANONYMOUS", "idle", 500, 0) == 0
    assert manager.record("User:ANONYMOUS", "busy", 5, 0) == 0  # 0.5 % over 10 s
    assert manager.record("User:ANONYMOUS", "busy", 20, 0) == 15_000  # 2.5 %: (2.5 - 1) / 1 * 10 s
    bounded = ClientQuotaManager("request_percentage", configs, 11, 1, bounded=True)
    assert bounded.record("User:ANONYMOUS", "busy", 25, 0) == 1000  # at most one window, as Kafka's request quota


def test_mutation_quota_strict_and_permissive():
    manager = MutationQuotaManager("controller_mutation_rate",
                                   Configs({("alice", None): {"controller_mutation_rate": "1"}}), 11, 1)
    assert manager.admit("User:alice", "c", 10, 0, strict=True)
    assert manager.admit("User:alice", "c", 10, 0, strict=True)  # 11 - 20 < 0: this one still passes
    assert not manager.admit("User:alice", "c", 1, 0, strict=True)  # now refused
    assert manager.throttle("User:alice", "c", 0) == 9000
    assert manager.admit("User:alice", "c", 1, 0, strict=False)  # permissive: always passes
    assert manager.admit("User:bob", "c", 1000, 0, strict=True)  # no quota for bob


def test_byte_rate_unrecord_and_window_cap():
    configs = Configs({(None, "app"): {"consumer_byte_rate": "1000"}})
    fetch = ClientQuotaManager("consumer_byte_rate", configs, 11, 1)
    assert fetch.max_value_in_window("User:ANONYMOUS", "app") == 10000  # 1000 B/s over num - 1 windows
    assert fetch.max_value_in_window("User:ANONYMOUS", "other") is None
    assert fetch.record("User:ANONYMOUS", "app", 9000, 0) == 0  # 9000 B over 10 s: within
    throttle = fetch.record("User:ANONYMOUS", "app", 6000, 100)  # 15000 B over 10.1 s
    assert throttle == 4900  # (15000 / 10.1 - 1000) / 1000 * 10100 ms
    fetch.unrecord("User:ANONYMOUS", "app", 6000, 100)  # the throttled fetch answered empty
    assert fetch.record("User:ANONYMOUS", "app", 0, 200) == 0
    assert fetch.record("User:ANONYMOUS", "other", 10 ** 9, 200) == 0
