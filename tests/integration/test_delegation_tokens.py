"""Delegation tokens (KIP-48): Create / Renew / Expire on the controller (forwarded), Describe from any
broker's cache, Kafka's znodes and errors, and SCRAM login with a token (tokenauth=true)."""

import asyncio
import base64
import json
import time

import pytest

from fauxka.broker.auth.client import SaslClientError, authenticate
from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import request_schema
from tests.admin_helpers import send, topic_spec, unique
from tests.harness import Cluster, wait_for

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OVERRIDES = {
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
    "listener.name.client.plain.sasl.jaas.config": f'{PLAIN} required user_alice="alice-secret" '
                                                   'user_bob="bob-secret" user_carol="carol-secret";',
    "listener.name.client.scram-sha-256.sasl.jaas.config": f"{SCRAM} required;",
    "listener.name.client.scram-sha-512.sasl.jaas.config": f"{SCRAM} required;",
}
DAY, WEEK = 86_400_000, 7 * 86_400_000
CREATE, RENEW, EXPIRE, DESCRIBE = 38, 39, 40, 41


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    overrides = {**OVERRIDES, "delegation.token.secret.key": "token-secret"}
    made = Cluster(zookeeper, tmp_path_factory.mktemp("tokens"), 2, overrides, {"CLIENT": "SASL_PLAINTEXT"})
    made.start()
    yield made
    made.stop()


async def call(address: str, requests: list[tuple[int, int, dict]], user: str = "alice", mechanism: str = "PLAIN",
               password: str | None = None, extensions: dict | None = None) -> list:
    """Log in on one connection (PLAIN with the user's password, or SCRAM), then send each request."""
    host, _, port = address.rpartition(":")
    conn = await KafkaConnection.open(host, int(port), 5.0)
    try:
        await authenticate(conn, mechanism, user, password or f"{user}-secret", 5.0, extensions)
        return [await conn.send(build(request_schema(key, version), values), 10.0)
                for key, version, values in requests]
    finally:
        await conn.close()


def one(address: str, key: int, version: int, values: dict, **login):
    return asyncio.run(call(address, [(key, version, values)], **login))[0]


def create_values(renewers=(), max_lifetime=-1, owner=None) -> dict:
    return {"owner_principal_type": "User" if owner else None, "owner_principal_name": owner,
            "renewers": [{"principal_type": t, "principal_name": n} for t, n in renewers], "max_lifetime": max_lifetime}


def ms(stamp) -> int:
    return stamp if isinstance(stamp, int) else round(stamp.timestamp() * 1000)


def described(address: str, owners=None, **login) -> dict:
    owners = None if owners is None else [{"principal_type": "User", "principal_name": o} for o in owners]
    response = one(address, DESCRIBE, 3, {"owners": owners}, **login)
    assert int(response.error_code) == 0
    return {t.token_id: t for t in response.tokens}


def test_create_describe_renew_login_expire(cluster):
    other = next(i for i in cluster.brokers if i != cluster.controller_id())
    client = {i: cluster.listener_address(i, "CLIENT") for i in cluster.brokers}
    before = int(time.time() * 1000)
    created = one(client[other], CREATE, 3, create_values([("User", "bob")]))  # forwarded to the controller
    assert int(created.error_code) == 0
    assert (created.principal_type, created.principal_name) == ("User", "alice")
    assert (created.token_requester_principal_type, created.token_requester_principal_name) == ("User", "alice")
    issued, token_id, hmac = ms(created.issue_timestamp), created.token_id, bytes(created.hmac)
    assert before <= issued <= int(time.time() * 1000) and len(hmac) == 64 and len(token_id) == 22
    assert (ms(created.expiry_timestamp) - issued, ms(created.max_timestamp) - issued) == (DAY, WEEK)

    stored = json.loads(cluster.zk_get(f"/delegation_token/tokens/{token_id}"))
    assert stored == {"version": 3, "owner": "User%3Aalice", "tokenRequester": "User%3Aalice",
                      "renewers": ["User%3Abob"], "issueTimestamp": issued, "maxTimestamp": issued + WEEK,
                      "expiryTimestamp": issued + DAY, "tokenId": token_id}
    for broker_id in cluster.brokers:  # every broker's cache, HMAC computed by each
        wait_for(lambda: token_id in described(client[broker_id]), 10)
        token = described(client[broker_id], user="bob")[token_id]  # a renewer sees it too
        assert (bytes(token.hmac), token.principal_name, token.expiry_timestamp) == (hmac, "alice", issued + DAY)
        assert [(r.principal_type, r.principal_name) for r in token.renewers] == [("User", "bob")]
    assert token_id not in described(client[other], owners=["carol"])
    assert token_id in described(client[other], owners=["bob"])
    assert one(client[other], DESCRIBE, 3, {"owners": []}).tokens == ()

    renewed = one(client[other], RENEW, 2, {"hmac": hmac, "renew_period": 60_000}, user="bob")
    assert int(renewed.error_code) == 0 and abs(ms(renewed.expiry_timestamp) - time.time() * 1000 - 60_000) < 5000
    assert json.loads(cluster.zk_get(f"/delegation_token/tokens/{token_id}"))["expiryTimestamp"] == ms(
        renewed.expiry_timestamp)
    assert int(one(client[other], RENEW, 2, {"hmac": hmac, "renew_period": -1}, user="carol").error_code) == 63
    assert int(one(client[other], RENEW, 1, {"hmac": b"x" * 64, "renew_period": -1}).error_code) == 62
    assert int(one(client[other], EXPIRE, 2, {"hmac": b"x" * 64, "expiry_time_period": -1}).error_code) == 62

    password = base64.b64encode(hmac).decode()
    for broker_id in cluster.brokers:  # SCRAM with the token: the principal is its owner
        topic = unique("by-token")
        got = asyncio.run(call(client[broker_id], [
            (19, 7, {"topics": [topic_spec(topic, 1, 1)], "timeout": 10000, "validate_only": False}),
            (CREATE, 3, create_values()), (DESCRIBE, 3, {"owners": None})],
            user=token_id, mechanism="SCRAM-SHA-256", password=password, extensions={"tokenauth": "true"}))
        assert int(got[0].topics[0].error_code) == 0
        assert [int(r.error_code) for r in got[1:]] == [64, 64]  # no tokens over a token connection
        audit = [e for e in cluster.audit_events() if e["resource_name"] == topic]
        assert [(e["principal"], e["action"]) for e in audit][-1:] == [("User:alice", "CREATE")], audit
    with pytest.raises(SaslClientError):  # without the extension the token id is no user
        asyncio.run(call(client[other], [], user=token_id, mechanism="SCRAM-SHA-256", password=password))
    with pytest.raises(SaslClientError):
        asyncio.run(call(client[other], [], user=token_id, mechanism="SCRAM-SHA-512", password="wrong",
                         extensions={"tokenauth": "true"}))

    expired = one(client[other], EXPIRE, 2, {"hmac": hmac, "expiry_time_period": -1})
    assert int(expired.error_code) == 0 and abs(ms(expired.expiry_timestamp) - time.time() * 1000) < 5000
    assert cluster.zk_get(f"/delegation_token/tokens/{token_id}") is None
    for broker_id in cluster.brokers:
        wait_for(lambda: token_id not in described(client[broker_id]), 10)
    with pytest.raises(SaslClientError):
        asyncio.run(call(client[other], [], user=token_id, mechanism="SCRAM-SHA-256", password=password,
                         extensions={"tokenauth": "true"}))
    assert int(one(client[other], RENEW, 2, {"hmac": hmac, "renew_period": -1}).error_code) == 62

    events = [e for e in cluster.audit_events() if e["resource_type"] == "DELEGATION_TOKEN"
              and e["resource_name"] == token_id]
    assert [(e["action"], e["principal"], e["error_code"]) for e in events] == [
        ("CREATE_DELEGATION_TOKEN", "User:alice", 0), ("RENEW_DELEGATION_TOKEN", "User:bob", 0),
        ("RENEW_DELEGATION_TOKEN", "User:carol", 63), ("EXPIRE_DELEGATION_TOKEN", "User:alice", 0)]
    assert password not in json.dumps(cluster.audit_events())


def expired_token(address: str) -> tuple[bytes, str]:
    created = one(address, CREATE, 2, create_values(max_lifetime=60_000))
    assert int(created.error_code) == 0 and ms(created.max_timestamp) - ms(created.issue_timestamp) == 60_000
    hmac, token_id = bytes(created.hmac), created.token_id
    assert int(one(address, EXPIRE, 1, {"hmac": hmac, "expiry_time_period": 0}).error_code) == 0
    time.sleep(0.01)
    return hmac, token_id


def test_an_expired_token_cannot_be_renewed(cluster):  # the expiry check runs once an hour here
    address = cluster.listener_address(cluster.controller_id(), "CLIENT")
    hmac, token_id = expired_token(address)
    assert int(one(address, RENEW, 2, {"hmac": hmac, "renew_period": -1}).error_code) == 66
    assert int(one(address, EXPIRE, 2, {"hmac": hmac, "expiry_time_period": -1}).error_code) == 66
    assert cluster.zk_get(f"/delegation_token/tokens/{token_id}") is not None


def test_the_controller_removes_expired_tokens(make_cluster):
    overrides = {**OVERRIDES, "delegation.token.master.key": "old-name",
                 "delegation.token.expiry.check.interval.ms": "300"}
    fast = make_cluster(1, overrides, extra_listeners={"CLIENT": "SASL_PLAINTEXT"})
    _, token_id = expired_token(fast.listener_address(1, "CLIENT"))
    wait_for(lambda: fast.zk_get(f"/delegation_token/tokens/{token_id}") is None, 10, what="expiry check")


def test_owner_and_principal_checks(cluster):
    address = cluster.listener_address(cluster.controller_id(), "CLIENT")
    bad = one(address, CREATE, 3, create_values([("Group", "g")]))
    assert (int(bad.error_code), bad.token_id, ms(bad.issue_timestamp)) == (67, "", -1)
    for_bob = one(address, CREATE, 3, create_values(owner="bob"))  # no authorizer: CreateTokens is allowed
    assert int(for_bob.error_code) == 0
    assert (for_bob.principal_name, for_bob.token_requester_principal_name) == ("bob", "alice")
    expire = {"hmac": bytes(for_bob.hmac), "expiry_time_period": -1}
    assert int(one(address, EXPIRE, 2, expire, user="carol").error_code) == 63
    assert int(one(address, EXPIRE, 2, expire, user="bob").error_code) == 0


def test_plaintext_connections_are_refused(cluster):
    for broker_id in cluster.brokers:  # the default listener is PLAINTEXT
        address = cluster.address_of(broker_id)
        created = send(address, CREATE, 3, create_values())
        assert (int(created.error_code), created.principal_name) == (64, "ANONYMOUS")
        assert int(send(address, RENEW, 2, {"hmac": b"x", "renew_period": -1}).error_code) == 64
        assert int(send(address, EXPIRE, 2, {"hmac": b"x", "expiry_time_period": -1}).error_code) == 64
        assert int(send(address, DESCRIBE, 3, {"owners": None}).error_code) == 64


def test_without_a_secret_key(make_cluster):
    plain = make_cluster(1, OVERRIDES, extra_listeners={"CLIENT": "SASL_PLAINTEXT"})
    address = plain.listener_address(1, "CLIENT")
    created = one(address, CREATE, 3, create_values())
    assert (int(created.error_code), ms(created.expiry_timestamp), created.principal_name) == (61, -1, "alice")
    assert int(one(address, RENEW, 2, {"hmac": b"x", "renew_period": -1}).error_code) == 61
    assert int(one(address, EXPIRE, 2, {"hmac": b"x", "expiry_time_period": -1}).error_code) == 61
    assert int(one(address, DESCRIBE, 3, {"owners": None}).error_code) == 61
    assert plain.zk_get("/delegation_token/tokens") is None


def test_version_0_of_every_token_api(cluster):
    """v0 is v1 on the wire (Kafka 3.4 still serves it); a non-controller forwards the writes."""
    other = next(i for i in cluster.brokers if i != cluster.controller_id())
    address = cluster.listener_address(other, "CLIENT")
    created = one(address, CREATE, 0, create_values([("User", "bob")]))
    assert int(created.error_code) == 0 and created.principal_name == "alice"
    hmac = bytes(created.hmac)
    wait_for(lambda: created.token_id in described(address), 10)
    described_v0 = one(address, DESCRIBE, 0, {"owners": None})
    assert int(described_v0.error_code) == 0 and created.token_id in {t.token_id for t in described_v0.tokens}
    assert int(one(address, RENEW, 0, {"hmac": hmac, "renew_period": 60_000}, user="bob").error_code) == 0
    assert int(one(address, EXPIRE, 0, {"hmac": hmac, "expiry_time_period": -1}).error_code) == 0
    assert cluster.zk_get(f"/delegation_token/tokens/{created.token_id}") is None
