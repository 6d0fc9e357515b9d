"""Delegation tokens: ids, HMACs, the znode JSON, lifetimes, Describe's filter, SCRAM token login."""

import base64
import hashlib
import hmac
import json

import pytest

from fauxka.broker.auth import scram
from fauxka.broker.config import config_from_dict
from fauxka.model import delegation_tokens as tokens
from fauxka.model import scram_credential
from fauxka.zkstore import token_znodes

SETTINGS = tokens.TokenSettings("secret", max_lifetime_ms=1000, renew_ms=100, check_interval_ms=10)


def test_token_id_is_a_url_safe_base64_uuid():
    ids = {tokens.new_token_id() for _ in range(100)}
    assert len(ids) == 100
    for token_id in ids:
        assert len(token_id) == 22 and "=" not in token_id and "+" not in token_id and "/" not in token_id
        assert len(base64.urlsafe_b64decode(token_id + "==")) == 16


def test_hmac_is_hmac_sha512_of_the_id_keyed_by_the_secret():
    expected = hmac.new("clé".encode(), b"abc", hashlib.sha512).digest()
    assert tokens.create_hmac("abc", "clé") == expected and len(expected) == 64
    assert tokens.create_hmac("abc", "other") != expected


def test_json_is_kafkas_version_3_with_sanitized_principals():
    info = tokens.TokenInfo("id1", "User:alice", "User:bob", ("User:carol d",), 1, 3, 2)
    data = json.loads(token_znodes.to_json(info))
    assert data == {"version": 3, "owner": "User%3Aalice", "tokenRequester": "User%3Abob",
                    "renewers": ["User%3Acarol%20d"], "issueTimestamp": 1, "maxTimestamp": 3, "expiryTimestamp": 2,
                    "tokenId": "id1"}
    assert token_znodes.from_json(token_znodes.to_json(info)) == info


def test_json_of_older_versions_and_bad_data():
    old = {"version": 1, "owner": "User%3Aalice", "renewers": [], "issueTimestamp": 1, "maxTimestamp": 3,
           "expiryTimestamp": 2, "tokenId": "x"}
    assert token_znodes.from_json(json.dumps(old).encode()).requester == "User:alice"
    assert token_znodes.from_json(b"") is None
    with pytest.raises(ValueError):
        token_znodes.from_json(json.dumps({**old, "version": 4}).encode())
    with pytest.raises(ValueError):
        token_znodes.from_json(json.dumps({**old, "owner": "alice"}).encode())


def test_lifetimes():
    info = tokens.new_token("t", "User:a", "User:a", [], -1, 10_000, SETTINGS)
    assert (info.issue_ms, info.expiry_ms, info.max_ms) == (10_000, 10_100, 11_000)
    short = tokens.new_token("t", "User:a", "User:a", [], 50, 10_000, SETTINGS)
    assert (short.expiry_ms, short.max_ms) == (10_050, 10_050)
    assert tokens.new_token("t", "User:a", "User:a", [], 10**9, 0, SETTINGS).max_ms == 1000
    assert not info.expired(10_100) and info.expired(10_101)


def test_describe_filter():
    token = tokens.TokenInfo("t", "User:alice", "User:alice", ("User:bob",), 0, 0, 0)
    never = lambda _: False  # noqa: E731
    assert tokens.visible(token, "User:alice", None, never, never)
    assert tokens.visible(token, "User:bob", None, never, never)
    assert not tokens.visible(token, "User:eve", None, never, never)
    assert tokens.visible(token, "User:eve", None, lambda token_id: token_id == "t", never)
    assert tokens.visible(token, "User:eve", None, never, lambda owner: owner == "User:alice")
    assert not tokens.visible(token, "User:alice", ["User:carol"], never, never)
    assert tokens.visible(token, "User:alice", ["User:bob"], never, never)


def test_settings_need_a_secret_and_accept_the_old_name():
    base = {"broker.id": "1", "zookeeper.connect": "zk:2181"}
    assert tokens.settings(config_from_dict(base)) is None
    s = tokens.settings(config_from_dict({**base, "delegation.token.master.key": "old"}))
    assert s == tokens.TokenSettings("old", 604800000, 86400000, 3600000)
    assert tokens.settings(config_from_dict({**base, "delegation.token.secret.key": "new",
                                             "delegation.token.master.key": "old"})).secret == "new"


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_login_with_a_token(mechanism):
    password = base64.b64encode(tokens.create_hmac("tok", "secret")).decode()
    credential = scram_credential.new_credential(mechanism, password, 4096)
    server = scram.ScramServer(mechanism, lambda user: None, {"tok": ("alice", credential)}.get)
    client = scram.ScramClient(mechanism, "tok", password, {"tokenauth": "true"})
    client.verify(server.evaluate(client.final(server.evaluate(client.first()))))
    assert server.complete and server.authorization_id == "alice" and server.token_authenticated
    assert server.username == "tok"


def test_scram_token_login_failures():
    password = "pw"
    credential = scram_credential.new_credential("SCRAM-SHA-256", password, 4096)
    users = scram.ScramServer("SCRAM-SHA-256", {"tok": credential}.get)  # no tokens: tokenauth fails
    with pytest.raises(scram.ScramError, match="Token Authentication failed: Invalid tokenId : tok"):
        users.evaluate(scram.ScramClient("SCRAM-SHA-256", "tok", password, {"tokenauth": "true"}).first())
    server = scram.ScramServer("SCRAM-SHA-256", lambda u: None, {"tok": ("alice", credential)}.get)
    client = scram.ScramClient("SCRAM-SHA-256", "tok", "wrong", {"tokenauth": "true"})
    with pytest.raises(scram.ScramError, match="Invalid client credentials"):
        server.evaluate(client.final(server.evaluate(client.first())))
    plain = scram.ScramServer("SCRAM-SHA-256", lambda u: None, {"tok": ("alice", credential)}.get)
    with pytest.raises(scram.ScramError, match="Invalid user credentials"):  # without the extension: a user
        plain.evaluate(scram.ScramClient("SCRAM-SHA-256", "tok", password).first())
