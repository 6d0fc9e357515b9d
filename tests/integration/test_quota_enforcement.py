"""Client quotas enforced on the shared cluster, each test with its own client id: KIP-599's
controller_mutation_rate (THROTTLING_QUOTA_EXCEEDED), request_percentage with throttle_time_ms and the
connection muted for it (KIP-219), and the throttle-time metrics."""

import asyncio
import time
import urllib.request

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import request_schema
from tests.admin_helpers import topic_spec, unique
from tests.integration.test_client_quotas import alter

THROTTLING_QUOTA_EXCEEDED = 89
METADATA = {"topics": None, "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False}


async def connect(address: str, client_id: str) -> KafkaConnection:
    host, _, port = address.rpartition(":")
    return await KafkaConnection.open(host, int(port), 10, client_id)


def ms(value) -> int:
    return int(value.total_seconds() * 1000)


def test_controller_mutation_rate(cluster):
    client_id = unique("mutator")
    controller = cluster.controller_address()
    assert alter(controller, [([("client-id", client_id)], [("controller_mutation_rate", 1)])])[0][1] == 0

    async def run():
        conn = await connect(controller, client_id)
        try:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:  # until the quota has reached the controller's watches
                names = [unique("mq"), unique("mq")]
                request = build(request_schema(19, 7), {"topics": [topic_spec(n, 20, 1) for n in names],
                                                        "timeout": 10000, "validate_only": False})
                response = await conn.send(request, 15)
                codes = [int(t.error_code) for t in response.topics]
                if THROTTLING_QUOTA_EXCEEDED in codes:
                    return response
                await asyncio.sleep(0.2)
            raise AssertionError("never throttled")
        finally:
            await conn.close()

    response = asyncio.run(run())
    first, second = response.topics
    # 11 tokens (1/s over 11 samples): the first topic's 20 partitions pass and empty the bucket
    assert (int(first.error_code), int(second.error_code)) == (0, THROTTLING_QUOTA_EXCEEDED)
    assert second.error_message == "The throttling quota has been exceeded."
    assert 5000 <= ms(response.throttle_time) <= 30000
    metrics_port = cluster.brokers[cluster.controller_id()].metrics_port
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode()
    assert f'fauxka_quota_throttle_seconds_total{{client_id="{client_id}",quota="controller_mutation_rate",user=""}}' in text


def test_request_percentage_throttles_and_mutes(cluster):
    client_id = unique("busy")
    address = cluster.address_of(1)
    assert alter(cluster.controller_address(), [([("client-id", client_id)], [("request_percentage", 0.01)])])[0][1] == 0
    request = build(request_schema(3, 9), METADATA)

    async def run():
        conn = await connect(address, client_id)
        try:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                response = await conn.send(request, 10)
                if ms(response.throttle_time) > 0:
                    break
            else:
                raise AssertionError("never throttled")
            throttle = ms(response.throttle_time)
            started = time.monotonic()
            try:  # KIP-219: the connection is muted for the throttle time
                await conn.send(request, min(throttle / 1000, 1.0) * 0.8)
                answered_after = time.monotonic() - started
            except asyncio.TimeoutError:
                answered_after = None
            return throttle, answered_after
        finally:
            await conn.close()

    throttle, answered_after = asyncio.run(run())
    assert throttle > 0
    assert answered_after is None, f"answered after {answered_after}s despite a {throttle} ms throttle"

    async def other_client():  # another client id is not throttled
        conn = await connect(address, unique("calm"))
        try:
            return ms((await conn.send(request, 10)).throttle_time)
        finally:
            await conn.close()
    assert asyncio.run(other_client()) == 0
