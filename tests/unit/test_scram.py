import base64

import pytest

from fauxka.broker.auth import scram
from fauxka.broker.auth.sasl import AuthenticationFailed, check_plain
from fauxka.controller.scram import Deletion, Upsertion, apply, check
from fauxka.model import scram_credential

SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"


def test_rfc7677_sha256_vector(monkeypatch):
    credential = scram_credential.new_credential("SCRAM-SHA-256", "pencil", 4096, SALT)
    server = scram.ScramServer("SCRAM-SHA-256", lambda user: credential if user == "user" else None)
    monkeypatch.setattr(scram, "secure_random_string", lambda: SERVER_NONCE)
    first = server.evaluate(f"n,,n=user,r={CLIENT_NONCE}".encode())
    assert first == f"r={CLIENT_NONCE}{SERVER_NONCE},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096".encode()
    final = server.evaluate(f"c=biws,r={CLIENT_NONCE}{SERVER_NONCE},"
                            "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=".encode())
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.username == "user"


def test_credential_string_round_trip_and_kafka_format():
    credential = scram_credential.new_credential("SCRAM-SHA-512", "secret", 8192, b"salt")
    text = scram_credential.credential_to_string(credential)
    assert text.startswith("salt=c2FsdA==,stored_key=") and text.endswith(",iterations=8192")
    assert [kv.split("=", 1)[0] for kv in text.split(",")] == ["salt", "stored_key", "server_key", "iterations"]
    assert scram_credential.credential_from_string(text) == credential
    for bad in ("salt=c2FsdA==,iterations=4096", "nonsense", "salt=!!,stored_key=,server_key=,iterations=1"):
        with pytest.raises(ValueError):
            scram_credential.credential_from_string(bad)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_client_and_server_agree(mechanism):
    credential = scram_credential.new_credential(mechanism, "p@ss,word=", 4096)
    server = scram.ScramServer(mechanism, {"al,i=ce": credential}.get)
    client = scram.ScramClient(mechanism, "al,i=ce", "p@ss,word=")
    client.verify(server.evaluate(client.final(server.evaluate(client.first()))))
    assert server.username == "al,i=ce"


def test_server_failures():
    credential = scram_credential.new_credential("SCRAM-SHA-256", "right", 4096)
    lookup = {"alice": credential}.get
    server = scram.ScramServer("SCRAM-SHA-256", lookup)
    client = scram.ScramClient("SCRAM-SHA-256", "alice", "wrong")
    with pytest.raises(scram.ScramError) as err:
        server.evaluate(client.final(server.evaluate(client.first())))
    assert not err.value.public and not server.complete
    with pytest.raises(scram.ScramError, match="Invalid user credentials"):
        scram.ScramServer("SCRAM-SHA-256", lookup).evaluate(b"n,,n=bob,r=abc")
    with pytest.raises(scram.ScramError, match="client first message format"):
        scram.ScramServer("SCRAM-SHA-256", lookup).evaluate(b"y,,n=alice,r=abc")
    with pytest.raises(scram.ScramError, match="authorization id") as err:
        scram.ScramServer("SCRAM-SHA-256", lookup).evaluate(b"n,a=bob,n=alice,r=abc")
    assert err.value.public
    weak = scram_credential.new_credential("SCRAM-SHA-256", "right", 1000)
    with pytest.raises(scram.ScramError, match="less than the minimum 4096"):
        scram.ScramServer("SCRAM-SHA-256", {"alice": weak}.get).evaluate(b"n,,n=alice,r=abc")


def test_sasl_names():
    assert scram_credential.sasl_name("a=b,c") == "a=3Db=2Cc"
    assert scram_credential.username_of("a=3Db=2Cc") == "a=b,c"
    with pytest.raises(ValueError):
        scram_credential.username_of("a=b")


def test_plain():
    users = {"alice": "alice-secret"}.get
    assert check_plain(b"\0alice\0alice-secret", users) == "alice"
    assert check_plain(b"alice\0alice\0alice-secret", users) == "alice"
    cases = [(b"\0alice\0wrong", "Authentication failed: Invalid username or password"),
             (b"\0bob\0x", "Authentication failed: Invalid username or password"),
             (b"\0\0x", "Authentication failed: username not specified"),
             (b"\0alice\0", "Authentication failed: password not specified"),
             (b"alice\0alice-secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
             (b"a\0b\0c\0d", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),
             (b"bob\0alice\0alice-secret",
              "Authentication failed: Client requested an authorization id that is different from username")]
    for token, message in cases:
        with pytest.raises(AuthenticationFailed) as err:
            check_plain(token, users)
        assert err.value.message == message


def _up(name, mechanism=1, iterations=4096):
    return Upsertion(name, mechanism, iterations, b"salt", b"salted")


def test_alter_checks_in_kafkas_order():
    results, users = check(
        [Deletion("", 1), Deletion("dave", 9), Deletion("erin", 1)],
        [_up("alice"), _up("bob", iterations=4095), _up("carol", iterations=16385), _up("frank", 0),
         _up("erin"), _up("gina", 2), _up("gina", 1)])
    assert [(r.user, r.error_code, r.error_message) for r in results] == [
        ("", 93, "Username must not be empty"),
        ("dave", 33, "Unknown SCRAM mechanism"),
        ("bob", 93, "Too few iterations"),
        ("carol", 93, "Too many iterations"),
        ("frank", 33, "Unknown SCRAM mechanism"),
        ("erin", 92, "A user credential cannot be altered twice in the same request"),
    ]
    assert users == ["alice", "gina"]


def test_apply_keeps_other_keys_and_stores_kafkas_format():
    props = apply({"producer_byte_rate": "1024", "SCRAM-SHA-512": "old"}, [Deletion("a", 2)], [_up("a", 1, 8192)])
    assert set(props) == {"producer_byte_rate", "SCRAM-SHA-256"}
    credential = scram_credential.credential_from_string(props["SCRAM-SHA-256"])
    assert credential == scram_credential.credential_from_salted("SCRAM-SHA-256", b"salt", b"salted", 8192)
