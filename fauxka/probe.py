"""Ask brokers for Metadata over the Kafka protocol: readiness and status."""

import asyncio
import time
from dataclasses import dataclass

from broker.protocol.build import build
from broker.protocol.client import request_once
from broker.protocol.codec import request_schema


@dataclass(frozen=True)
class ClusterView:
    brokers: list[int]
    controller_id: int
    cluster_id: str | None
    topics: list[str]


async def metadata(host: str, port: int, timeout_s: float) -> ClusterView:
    request = build(request_schema(3, 12), {"topics": None, "allow_auto_topic_creation": False,
                                            "include_topic_authorized_operations": False})
    response = await request_once(host, port, request, timeout_s)
    return ClusterView(sorted(b.node_id for b in response.brokers), response.controller_id,
                       response.cluster_id, sorted(t.name for t in response.topics))


async def wait_ready(addresses: list[tuple[str, int]], broker_ids: list[int], timeout_s: float) -> ClusterView:
    """Until every broker answers Metadata listing all `broker_ids` and a live controller."""
    deadline = time.monotonic() + timeout_s
    last_error = "no answer yet"
    while time.monotonic() < deadline:
        try:
            views = await asyncio.gather(*(metadata(h, p, 2.0) for h, p in addresses))
            if all(v.brokers == sorted(broker_ids) and v.controller_id in broker_ids for v in views):
                return views[0]
            last_error = f"brokers seen {[v.brokers for v in views]}, controllers {[v.controller_id for v in views]}"
        except (OSError, asyncio.TimeoutError, Exception) as exc:  # not up yet
            last_error = repr(exc)
        await asyncio.sleep(0.02)
    raise TimeoutError(f"cluster not ready within {timeout_s:.0f}s: {last_error}")


async def controller_epoch(zk_connect: str, timeout_s: float) -> int | None:
    import structlog  # kazoo and structlog: only `fauxka status` needs them

    from zkstore import ZkStore, ZkUnavailable
    from zkstore import paths as zp

    store = ZkStore(zk_connect, 6000, structlog.get_logger())
    try:
        await store.start(timeout_s)
        current = await store.get(zp.CONTROLLER_EPOCH)
        return zp.decode_epoch(current[0]) if current else None
    except ZkUnavailable:
        return None
    finally:
        await store.stop()
