import asyncio

import pytest

from fauxka.broker.auth import scram
from fauxka.broker.auth.jaas import PLAIN_MODULE, SCRAM_MODULE, JaasEntry
from fauxka.broker.auth.sasl import IllegalSaslState, SaslSession
from fauxka.broker.auth.sasl_config import ListenerSasl
from fauxka.broker.config import Endpoint
from fauxka.broker.connection import ANONYMOUS, Connection
from fauxka.model import scram_credential

SETTINGS = ListenerSasl("CLIENT", ("PLAIN", "SCRAM-SHA-256"), {
    "PLAIN": JaasEntry(PLAIN_MODULE, "REQUIRED", {"user_alice": "secret"}),
    "SCRAM-SHA-256": JaasEntry(SCRAM_MODULE, "REQUIRED", {})})
CREDENTIAL = scram_credential.new_credential("SCRAM-SHA-256", "pw", 4096)


def session():
    conn = Connection(Endpoint("CLIENT", "127.0.0.1", 9092, "SASL_PLAINTEXT"), "127.0.0.1")
    conn.sasl = SaslSession(conn, SETTINGS, lambda user, mech: CREDENTIAL if user == "bob" else None, 0, 1024)
    return conn, conn.sasl


def test_only_the_handshake_passes_before_authentication():
    conn, sasl = session()
    sasl.admit(18, "api_versions", False)  # unsupported ApiVersions: answered, nothing changes
    sasl.admit(18, "api_versions", True)
    with pytest.raises(IllegalSaslState, match="Unexpected ApiVersions request"):
        sasl.admit(18, "api_versions", True)
    for key in (3, 36):
        with pytest.raises(IllegalSaslState, match="during SASL handshake"):
            session()[1].admit(key, "metadata", True)
    sasl.admit(17, "sasl_handshake", True)
    assert conn.principal == ANONYMOUS and not sasl.complete


def test_plain_v1_then_everything_passes():
    conn, sasl = session()
    assert asyncio.run(sasl.handshake("PLAIN", 1)) == (0, ["PLAIN", "SCRAM-SHA-256"])
    assert not sasl.expects_raw_token
    with pytest.raises(IllegalSaslState, match="during SASL authentication"):
        sasl.admit(3, "metadata", True)
    assert asyncio.run(sasl.authenticate(b"\0alice\0secret")) == (0, None, b"")
    assert sasl.complete and conn.principal == "User:alice" and not conn.close_after_response
    sasl.admit(3, "metadata", True)


def test_failures_close_after_the_answer():
    conn, sasl = session()
    assert asyncio.run(sasl.handshake("GSSAPI", 1)) == (33, ["PLAIN", "SCRAM-SHA-256"])
    assert conn.close_after_response
    conn, sasl = session()
    asyncio.run(sasl.handshake("SCRAM-SHA-256", 1))
    assert asyncio.run(sasl.handshake("PLAIN", 1)) == (34, []) and conn.close_after_response
    conn, sasl = session()
    asyncio.run(sasl.handshake("SCRAM-SHA-256", 1))
    assert asyncio.run(sasl.authenticate(b"n,,n=eve,r=abc")) == (
        58, "Authentication failed during authentication due to invalid credentials with SASL mechanism "
            "SCRAM-SHA-256", b"")
    assert conn.close_after_response and conn.principal == ANONYMOUS


def test_legacy_scram_with_raw_tokens():
    conn, sasl = session()
    asyncio.run(sasl.handshake("SCRAM-SHA-256", 0))
    assert sasl.expects_raw_token
    client = scram.ScramClient("SCRAM-SHA-256", "bob", "pw")
    first = asyncio.run(sasl.raw_token(client.first()))
    final = asyncio.run(sasl.raw_token(client.final(first[4:])))
    client.verify(final[4:])
    assert sasl.complete and conn.principal == "User:bob" and not sasl.expects_raw_token
    conn, sasl = session()
    asyncio.run(sasl.handshake("SCRAM-SHA-256", 0))
    assert asyncio.run(sasl.raw_token(b"garbage")) is None and conn.close_after_response
