"""Ask brokers for Metadata over the Kafka protocol: readiness and status."""

import asyncio
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection, request_once
from fauxka.broker.protocol.codec import request_schema


@dataclass(frozen=True)
class ClusterView:
    brokers: list[int]
    controller_id: int
    cluster_id: str | None
    topics: list[str]


def _metadata_request():
    return build(request_schema(3, 12), {"topics": None, "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})


def _view(response) -> ClusterView:
    return ClusterView(sorted(b.node_id for b in response.brokers), response.controller_id,
                       response.cluster_id, sorted(t.name for t in response.topics))


async def metadata(host: str, port: int, timeout_s: float, tls: ssl.SSLContext | None = None) -> ClusterView:
    return _view(await request_once(host, port, _metadata_request(), timeout_s, ssl=tls))


def client_context(ca: str, cert: str | None = None, key: str | None = None) -> ssl.SSLContext:
    """A TLS client context trusting `ca`, presenting `cert`/`key` when given (fauxka up --tls)."""
    context = ssl.create_default_context(cafile=ca)
    if cert:
        context.load_cert_chain(cert, key)
    return context


async def wait_ready(addresses: list[tuple[str, int]], broker_ids: list[int], timeout_s: float,
                     check: Callable[[], None] = lambda: None, tls: ssl.SSLContext | None = None) -> ClusterView:
    """Until every broker answers Metadata listing all `broker_ids` and a live controller.
    `check` runs before each round and raises to give up early (a broker process has exited).

    One connection per broker, kept from round to round (a new one only after a failure): a
    connection per request would leave a TIME_WAIT socket on an ephemeral port each time."""
    deadline = time.monotonic() + timeout_s
    last_error = "no answer yet"
    connections: dict[tuple[str, int], KafkaConnection] = {}

    async def ask(address: tuple[str, int]) -> ClusterView:
        if address not in connections:
            connections[address] = await KafkaConnection.open(*address, 2.0, ssl=tls)
        try:
            return _view(await connections[address].send(_metadata_request(), 2.0))
        except BaseException:
            await connections.pop(address).close()
            raise

    try:
        while time.monotonic() < deadline:
            check()
            views = await asyncio.gather(*(ask(a) for a in addresses), return_exceptions=True)
            failed = [v for v in views if isinstance(v, BaseException)]
            if not failed:
                if all(v.brokers == sorted(broker_ids) and v.controller_id in broker_ids for v in views):
                    return views[0]
                last_error = (f"brokers seen {[v.brokers for v in views]}, "
                              f"controllers {[v.controller_id for v in views]}")
            elif not all(isinstance(v, Exception) for v in failed):
                raise next(v for v in failed if not isinstance(v, Exception))  # cancelled, interrupted
            else:
                last_error = repr(failed[0])  # not up yet
            await asyncio.sleep(0.02)
    finally:
        for conn in connections.values():
            await conn.close()
    raise TimeoutError(f"cluster not ready within {timeout_s:.0f}s: {last_error}")


async def controller_epoch(zk_connect: str, timeout_s: float) -> int | None:
    import structlog  # kazoo and structlog: only `fauxka status` needs them

    from fauxka.zkstore import ZkStore, ZkUnavailable
    from fauxka.zkstore import paths as zp

    store = ZkStore(zk_connect, 6000, structlog.get_logger())
    try:
        await store.start(timeout_s)
        current = await store.get(zp.CONTROLLER_EPOCH)
        return zp.decode_epoch(current[0]) if current else None
    except ZkUnavailable:
        return None
    finally:
        await store.stop()
