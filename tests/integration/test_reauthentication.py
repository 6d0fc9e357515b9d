"""KIP-368 re-authentication (connections.max.reauth.ms) on a SASL_PLAINTEXT listener: the session
lifetime in SaslAuthenticate, re-authenticating on the same connection, a changed principal and an
expired session closing the connection with a log line."""

import asyncio
import time

import pytest

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import request_schema
from tests.integration.test_sasl import METADATA, OVERRIDES

LIFETIME_MS = 1500


@pytest.fixture(scope="module")
def reauth_cluster(zookeeper, tmp_path_factory):
    from tests.harness import Cluster
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("reauth-cluster"), 1,
                      {**OVERRIDES, "connections.max.reauth.ms": "0",  # the listener's PLAIN sets its own:
                       "listener.name.client.plain.connections.max.reauth.ms": str(LIFETIME_MS)},
                      {"CLIENT": "SASL_PLAINTEXT"})
    cluster.start()
    yield cluster
    cluster.stop()


async def login(conn, user: str, password: str) -> int:
    """SaslHandshake v1 + SaslAuthenticate v2 with PLAIN: (error code, session lifetime ms)."""
    handshake = await conn.send(build(request_schema(17, 1), {"mechanism": "PLAIN"}), 5)
    assert int(handshake.error_code) == 0
    answer = await conn.send(build(request_schema(36, 2), {"auth_bytes": f"\0{user}\0{password}".encode()}), 5)
    lifetime = answer.session_lifetime
    return int(answer.error_code), int(lifetime.total_seconds() * 1000) if hasattr(lifetime, "seconds") else lifetime


def client_address(cluster) -> tuple[str, int]:
    return "127.0.0.1", cluster.brokers[1].listener_ports["CLIENT"]


def test_reauthentication_keeps_the_connection(reauth_cluster):
    async def run():
        conn = await KafkaConnection.open(*client_address(reauth_cluster), 5)
        try:
            assert await login(conn, "alice", "alice-secret") == (0, LIFETIME_MS)
            for _ in range(3):  # re-authenticate before each expiry, past several lifetimes
                await asyncio.sleep(LIFETIME_MS / 1000 * 0.6)
                assert await login(conn, "alice", "alice-secret") == (0, LIFETIME_MS)
                assert (await conn.send(METADATA, 5)).brokers
        finally:
            await conn.close()
    asyncio.run(run())


def test_an_expired_session_is_closed(reauth_cluster):
    async def run():
        conn = await KafkaConnection.open(*client_address(reauth_cluster), 5)
        try:
            assert (await login(conn, "alice", "alice-secret"))[0] == 0
            assert (await conn.send(METADATA, 5)).brokers
            await asyncio.sleep(LIFETIME_MS / 1000 + 0.3)
            with pytest.raises(Exception):  # closed by the broker
                await conn.send(METADATA, 5)
        finally:
            await conn.close()
    asyncio.run(run())
    log = reauth_cluster.brokers[1].log_file.read_text()
    assert "without re-authentication (KIP-368)" in log


def test_the_principal_cannot_change(reauth_cluster):
    async def run():
        conn = await KafkaConnection.open(*client_address(reauth_cluster), 5)
        try:
            assert (await login(conn, "alice", "alice-secret"))[0] == 0
            code, _ = await login(conn, "broker", "broker-secret")
            assert code == 58  # SASL_AUTHENTICATION_FAILED, then the connection closes
            with pytest.raises(Exception):
                await conn.send(METADATA, 5)
        finally:
            await conn.close()
    asyncio.run(run())
