"""AlterClientQuotas (controller) and DescribeClientQuotas (any broker) on the shared cluster."""

import asyncio
import json
import uuid

import pytest
import structlog

from tests.admin_helpers import send, unique
from fauxka.zkstore import ZkStore


@pytest.fixture(scope="module")
def controller(cluster):
    return cluster.controller_address()


def alter(address: str, entries: list, validate_only: bool = False, version: int = 1) -> list:
    """entries: [(entity [(type, name)], ops [(key, value or None to remove)])] -> [(entity, code, message)]."""
    values = {"validate_only": validate_only, "entries": [
        {"entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
         "ops": [{"key": k, "value": 0.0 if v is None else float(v), "remove": v is None} for k, v in ops]}
        for entity, ops in entries]}
    response = send(address, 49, version, values)
    return [({e.entity_type: e.entity_name for e in r.entity}, int(r.error_code), r.error_message)
            for r in response.entries]


def describe(address: str, components: list, strict: bool, version: int = 1):
    """components: [(type, match_type, match)] -> {frozenset(entity items): {key: value}} or (code, message)."""
    response = send(address, 48, version, {"strict": strict, "components": [
        {"entity_type": t, "match_type": m, "match": n} for t, m, n in components]})
    if response.error_code:
        assert response.entries is None
        return int(response.error_code), response.error_message
    return {frozenset((e.entity_type, e.entity_name) for e in r.entity): {v.key: v.value for v in r.values}
            for r in response.entries}


def key(**entity) -> frozenset:
    return frozenset((t.replace("_", "-"), n) for t, n in entity.items())


def zk_config_changes(cluster) -> list[dict]:
    async def read():
        store = ZkStore(cluster.zk_connect, 10000, structlog.get_logger())
        await store.start(10)
        try:
            names = await store.get_children("/config/changes") or []
            got = await asyncio.gather(*(store.get(f"/config/changes/{n}") for n in names))
            return [json.loads(g[0]) for g in got if g]
        finally:
            await store.stop()
    return asyncio.run(read())


@pytest.mark.parametrize("version", [0, 1])
def test_set_then_describe_back_from_every_broker(cluster, controller, version):
    user, client = unique("alice"), unique("app")
    got = alter(controller, [([("user", user)], [("producer_byte_rate", 1024), ("request_percentage", 12.5)]),
                             ([("user", user), ("client-id", client)], [("consumer_byte_rate", 2048)]),
                             ([("user", None), ("client-id", client)], [("controller_mutation_rate", 1e7)])],
                version=version)
    assert got == [({"user": user}, 0, None), ({"user": user, "client-id": client}, 0, None),
                   ({"user": None, "client-id": client}, 0, None)]
    for broker_id in cluster.brokers:
        address = cluster.address_of(broker_id)
        assert describe(address, [("user", 0, user)], True, version) == {
            key(user=user): {"producer_byte_rate": 1024.0, "request_percentage": 12.5}}
    assert describe(controller, [("user", 0, user)], False) == {
        key(user=user): {"producer_byte_rate": 1024.0, "request_percentage": 12.5},
        key(user=user, client_id=client): {"consumer_byte_rate": 2048.0}}
    assert describe(controller, [("user", 1, None), ("client-id", 0, client)], True) == {
        key(user=None, client_id=client): {"controller_mutation_rate": 1e7}}
    both = describe(controller, [("user", 2, None), ("client-id", 0, client)], True)
    assert set(both) == {key(user=user, client_id=client), key(user=None, client_id=client)}
    assert key(user=user) in describe(controller, [], False)
    assert describe(controller, [], True) == {}


def test_znodes_and_change_notifications_are_kafkas(cluster, controller):
    principal = f"User:CN={uuid.uuid4().hex[:8]} x*"  # sanitized in the path
    sanitized = principal.replace(":", "%3A").replace("=", "%3D").replace(" ", "%20").replace("*", "%2A")
    client = unique("app")
    got = alter(controller, [([("user", principal)], [("producer_byte_rate", 10), ("controller_mutation_rate", 2.5)]),
                             ([("client-id", client), ("user", principal)], [("request_percentage", 1e-4)])])
    assert [code for _, code, _ in got] == [0, 0]
    assert json.loads(cluster.zk_get(f"/config/users/{sanitized}")) == {
        "version": 1, "config": {"producer_byte_rate": "10", "controller_mutation_rate": "2.5"}}
    assert json.loads(cluster.zk_get(f"/config/users/{sanitized}/clients/{client}")) == {
        "version": 1, "config": {"request_percentage": "1.0E-4"}}
    paths = [c["entity_path"] for c in zk_config_changes(cluster) if c.get("version") == 2]
    assert f"users/{sanitized}" in paths and f"users/{sanitized}/clients/{client}" in paths
    assert describe(controller, [("user", 0, principal)], True) == {
        key(user=principal): {"producer_byte_rate": 10.0, "controller_mutation_rate": 2.5}}


def test_remove_keeps_other_keys_and_an_emptied_entity_disappears(cluster, controller):
    client = unique("app")
    alter(controller, [([("client-id", client)], [("producer_byte_rate", 100), ("consumer_byte_rate", 200)])])
    assert alter(controller, [([("client-id", client)], [("producer_byte_rate", None), ("never_set", None)])]) == [
        ({"client-id": client}, 0, None)]
    assert describe(cluster.non_controller_address(), [("client-id", 0, client)], True) == {
        key(client_id=client): {"consumer_byte_rate": 200.0}}
    alter(controller, [([("client-id", client)], [("consumer_byte_rate", None)])])
    assert describe(controller, [("client-id", 0, client)], True) == {}
    assert json.loads(cluster.zk_get(f"/config/clients/{client}")) == {"version": 1, "config": {}}


def test_validate_only_writes_nothing_but_validates(cluster, controller):
    user = unique("v")
    got = alter(controller, [([("user", user)], [("producer_byte_rate", 5)]),
                             ([("user", unique())], [("producer_byte_rate", 1.5)])], validate_only=True)
    assert got[0] == ({"user": user}, 0, None)
    assert got[1][1:] == (42, "Configuration producer_byte_rate must be a LONG value")
    assert cluster.zk_get(f"/config/users/{user}") is None
    assert describe(controller, [("user", 0, user)], True) == {}
    event = [e for e in cluster.audit_events() if e["resource_name"] == f"user={user}"][-1]
    assert event["validate_only"] is True and event["error_code"] == 0


def test_invalid_alterations_get_kafkas_errors(cluster, controller):
    user = unique("bad")
    got = alter(controller, [
        ([("user", user)], [("producer_byte_rate", 1), ("no_such_quota", 1)]),
        ([("client-id", unique())], [("connection_creation_rate", 1)]),
        ([("user", user), ("ip", "10.1.2.3")], [("producer_byte_rate", 1)]),
        ([("group", "g")], [("producer_byte_rate", 1)]),
        ([("user", "")], [("producer_byte_rate", 1)]),
        ([], [("producer_byte_rate", 1)]),
        ([("ip", "no such host")], [("connection_creation_rate", 1)]),
        ([("ip", "10.9.8.7")], [("connection_creation_rate", 2.5)]),
    ])
    assert [(code, message) for _, code, message in got] == [
        (42, "Invalid configuration key no_such_quota"),
        (42, "Invalid configuration key connection_creation_rate"),
        (42, "Invalid quota entity combination, IP entity should not be used with user/client ID entity."),
        (42, "Unhandled client quota entity type: group"),
        (42, "Empty user not supported"),
        (42, "Invalid empty client quota entity"),
        (42, "no%20such%20host is not a valid IP or resolvable host."),
        (42, "Configuration connection_creation_rate must be a INT value"),
    ]
    assert cluster.zk_get(f"/config/users/{user}") is None


def test_ip_quotas(controller):
    ip = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    assert alter(controller, [([("ip", ip)], [("connection_creation_rate", 7)])]) == [({"ip": ip}, 0, None)]
    assert describe(controller, [("ip", 0, ip)], True) == {key(ip=ip): {"connection_creation_rate": 7.0}}
    assert key(ip=ip) in describe(controller, [("ip", 2, None)], True)


def test_describe_filter_errors(controller):
    assert describe(controller, [("user", 2, None), ("user", 0, "a")], False) == (
        42, "Duplicate user filter component entity type")
    assert describe(controller, [("user", 2, None), ("ip", 2, None)], False) == (
        42, "Invalid entity filter component combination, IP filter component should not be used with "
            "user or clientId filter component.")
    assert describe(controller, [("group", 2, None)], False) == (35, "Custom entity type 'group' not supported")
    assert describe(controller, [("user", 9, None)], False) == (-1, None)


def test_a_non_controller_forwards_to_the_controller(cluster):
    user = unique()
    forwarder = cluster.non_controller_address()
    got = alter(forwarder, [([("user", user)], [("producer_byte_rate", 1)])])
    assert got == [({"user": user}, 0, None)]
    assert b'"producer_byte_rate":"1"' in cluster.zk_get(f"/config/users/{user}")
    [event] = [e for e in cluster.audit_events() if e["resource_name"] == f"user={user}"]
    assert event["forwarded_by"] == int(next(i for i, b in cluster.brokers.items()
                                             if cluster.address_of(i) == forwarder))


def test_audit_records_one_event_per_entity(cluster, controller):
    user, client = unique("audit"), unique("app")
    alter(controller, [([("user", user), ("client-id", client)], [("producer_byte_rate", 3)]),
                       ([("user", user)], [("bogus", 1)])])
    events = [e for e in cluster.audit_events() if e["resource_type"] == "CLIENT_QUOTA" and user in e["resource_name"]]
    assert [(e["resource_name"], e["action"], e["error_code"], e["error_message"]) for e in events] == [
        (f"user={user},client-id={client}", "ALTER_CLIENT_QUOTAS", 0, None),
        (f"user={user}", "ALTER_CLIENT_QUOTAS", 42, "Invalid configuration key bogus")]
    assert events[0]["ops"] == [{"key": "producer_byte_rate", "value": 3.0}]
    assert events[0]["api"] == "alter_client_quotas" and events[0]["validate_only"] is False


def test_kafka_python_encodes_and_decodes_both_apis(cluster):
    from kafka.admin import KafkaAdminClient
    from kafka.protocol.admin import AlterClientQuotasRequest, DescribeClientQuotasRequest

    user = unique("kp")
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=10000)
    try:
        manager = admin._manager  # kafka-python 3.0 has the messages but no client-quota admin methods
        alter_request = AlterClientQuotasRequest(
            entries=[([("user", user)], [("consumer_byte_rate", 4096.0, False)])], validate_only=False)
        altered = manager.run(manager.send, alter_request, cluster.controller_id())
        described = manager.run(manager.send, DescribeClientQuotasRequest(components=[("user", 0, user)], strict=True))
    finally:
        admin.close()
    assert [(e.error_code, [(d.entity_type, d.entity_name) for d in e.entity]) for e in altered.entries] == [
        (0, [("user", user)])]
    assert described.error_code == 0
    assert [([(d.entity_type, d.entity_name) for d in e.entity], [(v.key, v.value) for v in e.values])
            for e in described.entries] == [([("user", user)], [("consumer_byte_rate", 4096.0)])]


def test_concurrent_alterations_of_one_entity_lose_nothing(controller):
    from fauxka.broker.protocol.build import build
    from fauxka.broker.protocol.client import request_once
    from fauxka.broker.protocol.codec import request_schema

    client = unique("race")
    host, _, port = controller.rpartition(":")

    async def one(quota: str):
        request = build(request_schema(49, 1), {"validate_only": False, "entries": [
            {"entity": [{"entity_type": "client-id", "entity_name": client}],
             "ops": [{"key": quota, "value": 8.0, "remove": False}]}]})
        return (await request_once(host, int(port), request, 30)).entries[0].error_code

    async def race():
        return await asyncio.gather(*(one(k) for k in ("producer_byte_rate", "consumer_byte_rate",
                                                        "request_percentage", "controller_mutation_rate")))
    assert asyncio.run(race()) == [0, 0, 0, 0]
    assert describe(controller, [("client-id", 0, client)], True) == {key(client_id=client): {
        "producer_byte_rate": 8.0, "consumer_byte_rate": 8.0, "request_percentage": 8.0,
        "controller_mutation_rate": 8.0}}


def test_names_zookeeper_refuses_are_unknown_server_errors(controller):
    assert alter(controller, [([("user", "..")], [("producer_byte_rate", 1)])]) == [({"user": ".."}, -1, None)]
    assert describe(controller, [("user", 0, ".")], True) == (-1, None)
    assert describe(controller, [("user", 0, "")], True) == (-1, None)
