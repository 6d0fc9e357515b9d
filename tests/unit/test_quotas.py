"""Client quotas without processes: names, values, entities, the describe filter, the alter writes."""

import asyncio
import json
import math
from types import SimpleNamespace

import pytest

from fauxka.broker.handlers.alter_client_quotas import as_request_map, java_hashmap_order
from fauxka.broker.handlers.describe_client_quotas import ANY, describe, parse_filter
from fauxka.controller import quotas as q
from fauxka.model import quota_entities as qe
from fauxka.model.errors import KafkaError
from fauxka.zkstore import config_entities as ce
from fauxka.zkstore.fenced import ControllerMoved


def test_sanitize_is_kafkas_url_encoding():
    assert ce.sanitize("alice") == "alice"
    assert ce.sanitize("User:CN=a b,O=x*") == "User%3ACN%3Da%20b%2CO%3Dx%2A"
    assert ce.sanitize("a+b~c/é._-") == "a%2Bb%7Ec%2F%C3%A9._-"
    assert ce.desanitize("User%3ACN%3Da%20b%2CO%3Dx%2A") == "User:CN=a b,O=x*"
    assert ce.desanitize("a+b") == "a b"  # URLDecoder
    assert ce.sanitize_entity(None) == "<default>" and ce.desanitize_entity("<default>") is None
    assert ce.sanitize_entity("<default>") == "%3Cdefault%3E"
    with pytest.raises(KafkaError) as err:
        ce.desanitize("bad%zz")
    assert err.value.code == -1


@pytest.mark.parametrize("value, text", [
    (1024.0, "1024.0"), (12.5, "12.5"), (0.001, "0.001"), (9999999.0, "9999999.0"), (1e7, "1.0E7"),
    (12345678.9, "1.23456789E7"), (1e-4, "1.0E-4"), (-2.5e-7, "-2.5E-7"), (0.0, "0.0"), (-0.0, "-0.0"),
    (math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity"), (1.5e300, "1.5E300"),
])
def test_doubles_are_stored_as_java_prints_them(value, text):
    assert q.java_double_str(value) == text


def test_entity_paths_and_errors():
    assert q.entity_target({"user": "User:alice"}) == q.Target("users", "User%3Aalice", qe.USER_KEYS)
    assert q.entity_target({"client-id": "app", "user": None}).name == "<default>/clients/app"
    assert q.entity_target({"client-id": None}) == q.Target("clients", "<default>", qe.QUOTA_KEYS)
    assert q.entity_target({"ip": "10.0.0.1"}) == q.Target("ips", "10.0.0.1", qe.IP_KEYS)
    assert q.entity_target({"user": None}).validation_keys == qe.QUOTA_KEYS  # default user: no SCRAM keys
    assert q.entity_target({"user": "u", "client-id": "c"}).validation_keys == qe.QUOTA_KEYS
    assert q.entity_target({"user": "u"}).validation_keys == qe.USER_KEYS
    for entity, message in [
        ({}, "Invalid empty client quota entity"),
        ({"group": "g"}, "Unhandled client quota entity type: group"),
        ({"user": ""}, "Empty user not supported"),
        ({"client-id": "c", "ip": "1.2.3.4"},
         "Invalid quota entity combination, IP entity should not be used with user/client ID entity."),
    ]:
        with pytest.raises(KafkaError) as err:
            q.entity_target(entity)
        assert (err.value.code, err.value.message) == (42, message)


def test_request_entity_is_a_java_hashmap():
    assert java_hashmap_order(["user", "client-id"], 2) == ["client-id", "user"]
    assert java_hashmap_order(["client-id", "user"], 2) == ["client-id", "user"]
    assert as_request_map([("user", "a"), ("client-id", "b"), ("user", "c")]) == {"client-id": "b", "user": "c"}
    assert list(as_request_map([("user", "a"), ("client-id", "b"), ("user", "c")])) == ["client-id", "user"]


def test_ops_follow_kafkas_types_and_messages():
    props = {"SCRAM-SHA-256": "salt=...", "producer_byte_rate": "1"}
    got = q.apply_ops(props, [("producer_byte_rate", 2048.0), ("request_percentage", 12.5),
                              ("controller_mutation_rate", 1e7), ("consumer_byte_rate", 1.0000001)], qe.USER_KEYS)
    assert got == {"SCRAM-SHA-256": "salt=...", "producer_byte_rate": "2048", "request_percentage": "12.5",
                   "controller_mutation_rate": "1.0E7", "consumer_byte_rate": "1"}
    assert q.apply_ops(got, [("producer_byte_rate", None), ("no_such_key", None)], qe.USER_KEYS) == {
        "SCRAM-SHA-256": "salt=...", "request_percentage": "12.5", "controller_mutation_rate": "1.0E7",
        "consumer_byte_rate": "1"}
    assert q.apply_ops({}, [("connection_creation_rate", 5.0)], qe.IP_KEYS) == {"connection_creation_rate": "5"}
    for ops, keys, message in [
        ([("producer_byte_rate", 1.0), ("bogus", 1.0)], qe.QUOTA_KEYS, "Invalid configuration key bogus"),
        ([("connection_creation_rate", 1.0)], qe.QUOTA_KEYS, "Invalid configuration key connection_creation_rate"),
        ([("producer_byte_rate", 1.5)], qe.QUOTA_KEYS, "Configuration producer_byte_rate must be a LONG value"),
        ([("producer_byte_rate", -5.0)], qe.QUOTA_KEYS, "Configuration producer_byte_rate must be a LONG value"),
        ([("producer_byte_rate", 1e30)], qe.QUOTA_KEYS, "Configuration producer_byte_rate must be a LONG value"),
        ([("connection_creation_rate", 3e9)], qe.IP_KEYS, "Configuration connection_creation_rate must be a INT value"),
    ]:
        with pytest.raises(KafkaError) as err:
            q.apply_ops({}, ops, keys)
        assert (err.value.code, err.value.message) == (42, message)
    with pytest.raises(KafkaError) as err:  # a SCRAM key given a number: Kafka's IllegalStateException
        q.apply_ops({}, [("SCRAM-SHA-512", 1.0)], qe.USER_KEYS)
    assert (err.value.code, err.value.message) == (-1, None)
    assert q.apply_ops({}, [("request_percentage", -3.0)], qe.QUOTA_KEYS) == {"request_percentage": "-3.0"}


def test_stored_config_is_validated_before_a_write():
    q.validate_stored({"producer_byte_rate": "10", "SCRAM-SHA-256": "x"}, qe.USER_KEYS)
    for props, keys in [({"SCRAM-SHA-256": "x"}, qe.QUOTA_KEYS), ({"producer_byte_rate": "1.5"}, qe.QUOTA_KEYS),
                        ({"request_percentage": "abc"}, qe.QUOTA_KEYS), ({"connection_creation_rate": "-1"}, qe.IP_KEYS),
                        ({"retention.ms": "1"}, qe.QUOTA_KEYS)]:
        with pytest.raises(KafkaError):
            q.validate_stored(props, keys)
    assert ce.decode_config(b"") == {} and ce.decode_config(None) == {}
    assert ce.decode_config(b'{"version":1,"config":{"a":"1"}}') == {"a": "1"}


def test_filter_parsing_errors():
    assert parse_filter([("user", 0, "alice"), ("client-id", 1, None)]) == {"user": "alice", "client-id": None}
    assert parse_filter([("ip", 2, "ignored")]) == {"ip": ANY}
    for components, code, message in [
        ([("user", 2, None), ("user", 0, "a")], 42, "Duplicate user filter component entity type"),
        ([("client-id", 1, None), ("client-id", 1, None)], 42, "Duplicate client filter component entity type"),
        ([("", 1, None)], 42, "Unexpected empty filter component entity type"),
        ([("group", 1, None)], 35, "Custom entity type 'group' not supported"),
        ([("user", 2, None), ("ip", 2, None)], 42, "Invalid entity filter component combination, IP filter "
         "component should not be used with user or clientId filter component."),
        ([("group", 1, None), ("user", 7, None)], -1, None),  # request.filter() fails first
        ([("user", 0, None)], -1, None),
    ]:
        with pytest.raises(KafkaError) as err:
            parse_filter(components)
        assert (err.value.code, err.value.message) == (code, message)


class FakeReader:
    def __init__(self):
        p = {"producer_byte_rate": "100"}
        self.users = {"alice": p, "<default>": {"request_percentage": "5.0"}, "scram": {"SCRAM-SHA-256": "x"}}
        self.clients = {"app": {"consumer_byte_rate": "7"}, "<default>": p}
        self.pairs = {("alice", "app"): p, ("<default>", "<default>"): p, ("<default>", "app"): p}
        self.ips = {"10.0.0.1": {"connection_creation_rate": "3"}, "<default>": {"connection_creation_rate": "9"}}
        self.reads = []

    async def one(self, config_type, name):
        self.reads.append(("one", config_type, name))
        if config_type == "users" and "/clients/" in name:
            u, _, c = name.split("/")
            return self.pairs.get((u, c), {})
        return {"users": self.users, "clients": self.clients, "ips": self.ips}[config_type].get(name, {})

    async def all(self, config_type):
        self.reads.append(("all", config_type))
        return {"users": self.users, "clients": self.clients, "ips": self.ips}[config_type]

    async def all_user_clients(self):
        self.reads.append(("pairs",))
        return self.pairs


def run_describe(components, strict):
    reader = FakeReader()
    got = asyncio.run(describe(parse_filter(components), strict, reader))
    return {tuple(entity): values for entity, values in got}, reader.reads


def test_describe_matches_like_kafka():
    everything, _ = run_describe([], False)
    assert len(everything) == 2 + 2 + 3 + 2  # users with quotas, clients, pairs, ips; "scram" has none
    assert run_describe([], True)[0] == {}
    got, reads = run_describe([("user", 0, "alice")], True)
    assert got == {(("user", "alice"),): {"producer_byte_rate": 100.0}} and reads == [("one", "users", "alice")]
    got, _ = run_describe([("user", 0, "alice")], False)
    assert set(got) == {(("user", "alice"),), (("user", "alice"), ("client-id", "app"))}
    got, _ = run_describe([("user", 1, None)], True)
    assert got == {(("user", None),): {"request_percentage": 5.0}}
    got, _ = run_describe([("user", 2, None), ("client-id", 0, "app")], True)
    assert set(got) == {(("user", "alice"), ("client-id", "app")), (("user", None), ("client-id", "app"))}
    got, reads = run_describe([("user", 1, None), ("client-id", 1, None)], True)
    assert list(got) == [(("user", None), ("client-id", None))]
    assert reads == [("one", "users", "<default>/clients/<default>")]
    got, _ = run_describe([("client-id", 2, None)], True)
    assert set(got) == {(("client-id", "app"),), (("client-id", None),)}
    got, _ = run_describe([("ip", 1, None)], True)
    assert got == {(("ip", None),): {"connection_creation_rate": 9.0}}
    got, _ = run_describe([("ip", 2, None)], True)
    assert set(got) == {(("ip", "10.0.0.1"),), (("ip", None),)}


class FakeZk:
    def __init__(self, nodes):
        self.nodes = dict(nodes)

    async def get(self, path):
        return (self.nodes[path], SimpleNamespace(version=3)) if path in self.nodes else None

    async def exists(self, path):
        return SimpleNamespace(version=0) if path in self.nodes else None


class FakeAdmin:
    def __init__(self, fail=None):
        self.writes, self.audits, self.resigned, self.fail = [], [], [], fail
        self.writer = SimpleNamespace(write=self._write)
        self.election = SimpleNamespace(resign=self.resigned.append)
        self.audit = SimpleNamespace(record=lambda caller, **event: self.audits.append(event))
        self.log = SimpleNamespace(warning=print, info=print, exception=print)

    async def _write(self, ops):
        if self.fail:
            raise self.fail
        self.writes.append(ops)


def alter(admin, zk, alterations, validate_only=False):
    writes = q.QuotaWrites(zk, admin.writer, admin.election, admin.audit, admin.log)
    return asyncio.run(writes.alter(alterations, validate_only, caller=None))


def test_alter_writes_config_and_notification_preserving_other_keys():
    zk = FakeZk({"/config/users/alice": b'{"version":1,"config":{"SCRAM-SHA-256":"s","producer_byte_rate":"1"}}',
                 "/config/users": b""})
    admin = FakeAdmin()
    out = alter(admin, zk, [q.Alteration({"user": "alice"},
                                         [("producer_byte_rate", None), ("request_percentage", 50.0)]),
                            q.Alteration({"client-id": "app", "user": "bob"}, [("producer_byte_rate", 10.0)])])
    assert [(o.error_code, o.error_message) for o in out] == [(0, None), (0, None)]
    first, second = admin.writes
    assert (first[0].kind, first[0].path, first[0].version) == ("set", "/config/users/alice", 3)
    assert json.loads(first[0].data) == {"version": 1, "config": {"SCRAM-SHA-256": "s", "request_percentage": "50.0"}}
    assert (first[1].kind, first[1].path, first[1].sequence) == ("create", "/config/changes/config_change_", True)
    assert json.loads(first[1].data) == {"version": 2, "entity_path": "users/alice"}
    assert [(op.kind, op.path) for op in second] == [
        ("create", "/config/users/bob"), ("create", "/config/users/bob/clients"),
        ("create", "/config/users/bob/clients/app"), ("create", "/config/changes/config_change_")]
    assert json.loads(second[-1].data)["entity_path"] == "users/bob/clients/app"
    assert [(a["resource_type"], a["resource_name"], a["action"]) for a in admin.audits] == [
        ("CLIENT_QUOTA", "user=alice", "ALTER_CLIENT_QUOTAS"),
        ("CLIENT_QUOTA", "user=bob,client-id=app", "ALTER_CLIENT_QUOTAS")]


def test_validate_only_errors_duplicates_and_a_moved_controller():
    admin = FakeAdmin()
    out = alter(admin, FakeZk({}), [q.Alteration({"user": None}, [("producer_byte_rate", 1.0)]),
                                    q.Alteration({"user": "x"}, [("nope", 1.0)]),
                                    q.Alteration({"user": None}, [("producer_byte_rate", 1.5)])], validate_only=True)
    assert admin.writes == [] and len(admin.audits) == 3 and all(a["validate_only"] for a in admin.audits)
    assert [(o.entity, o.error_code, o.error_message) for o in out] == [
        ({"user": None}, 42, "Configuration producer_byte_rate must be a LONG value"),
        ({"user": "x"}, 42, "Invalid configuration key nope")]
    admin = FakeAdmin(fail=ControllerMoved("moved"))
    out = alter(admin, FakeZk({}), [q.Alteration({"client-id": "a"}, [("producer_byte_rate", 1.0)]),
                                    q.Alteration({"client-id": "b"}, [("producer_byte_rate", 1.0)])])
    assert [o.error_code for o in out] == [41, 41] and admin.resigned == ["moved"]
