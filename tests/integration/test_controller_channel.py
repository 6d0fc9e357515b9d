"""fauxka/broker/controller_channel.py as the data plane uses it: a broker's client of the controller,
run here in the test process on a real metadata cache of a real cluster, speaking for one of
its brokers (AlterPartition as that partition's leader, AllocateProducerIds, ControlledShutdown)."""

import asyncio
import signal

import structlog

from fauxka.broker.config import load_config
from fauxka.broker.controller_channel import ControllerChannel
from fauxka.broker.controller_link import ControllerLink
from fauxka.broker.inter_broker import InterBrokerConnector
from fauxka.broker.metadata_cache import MetadataCache
from fauxka.model.errors import ErrorCode
from tests.admin_helpers import create_topics, topic_spec, unique
from tests.harness import wait_for
from tests.integration.test_leadership import partitions
from fauxka.zkstore import ZkStore


async def _as_broker(cluster, broker_id: int, body):
    log = structlog.get_logger()
    zk = ZkStore(cluster.zk_connect, 10000, log)
    await zk.start(10)
    cache = MetadataCache(zk, log)
    cache.start()
    await cache.wait_synced(10)
    config = load_config(cluster.brokers[broker_id].config)
    link = ControllerLink(broker_id, cache, InterBrokerConnector(cache, config), log)
    channel = ControllerChannel(broker_id, config, cache, link, log)
    try:
        return await body(cache, channel)
    finally:
        await channel.close()
        cache.stop()
        await zk.stop()


# The real brokers replicate: a paused follower cannot be put back in the ISR by its real leader
# behind the test's back; a longer session keeps the paused broker registered meanwhile.
PAUSABLE = {"zookeeper.session.timeout.ms": "10000"}


def test_alter_partition_and_producer_ids_through_the_channel(make_cluster):
    cluster = make_cluster(3, PAUSABLE)
    # L leads, K stays in the ISR, F (not the controller: it is paused) is dropped
    K = cluster.controller_id()
    L, F = [b for b in cluster.brokers if b != K]
    topic = unique("chan")
    (result,) = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: [L, K, F]})])
    assert int(result.error_code) == 0

    async def body(cache, channel):
        wait = 0
        while (topic, 0) not in cache.partition_states and wait < 100:
            await asyncio.sleep(0.05)
            wait += 1
        state = cache.partition_states[(topic, 0)]
        topic_id = cache.topics[topic].topic_id
        assert (state.leader, state.zk_version) == (L, 0)
        shrunk = await channel.alter_partition(topic, topic_id, 0, state.leader_epoch, [L, K], state.zk_version)
        assert (shrunk.error, shrunk.leader, shrunk.leader_epoch, shrunk.isr, shrunk.partition_epoch) == \
            (ErrorCode.none, L, state.leader_epoch, [L, K], 1)
        stale = await channel.alter_partition(topic, topic_id, 0, state.leader_epoch, [L], 0)
        assert stale.error == ErrorCode.invalid_update_version
        fenced = await channel.alter_partition(topic, topic_id, 0, state.leader_epoch - 1, [L], 1)
        assert fenced.error == ErrorCode.fenced_leader_epoch
        ineligible = await channel.alter_partition(topic, topic_id, 0, state.leader_epoch, [L, K, 9], 1)
        assert ineligible.error == ErrorCode.ineligible_replica
        for _ in range(500):  # the cache learns it from its watch
            if cache.partition_states[(topic, 0)].zk_version == 1:
                break
            await asyncio.sleep(0.01)
        assert cache.partition_states[(topic, 0)].isr == [L, K] and cache.partition_states[(topic, 0)].zk_version == 1
        return [await channel.allocate_producer_ids() for _ in range(3)]

    cluster.brokers[F].signal(signal.SIGSTOP)  # the replica the test drops from the ISR
    try:
        blocks = asyncio.run(_as_broker(cluster, L, body))
    finally:
        cluster.brokers[F].signal(signal.SIGCONT)
    assert blocks == [(0, 1000), (1000, 1000), (2000, 1000)]


def test_controlled_shutdown_through_the_channel_moves_leaderships(make_cluster):
    cluster = make_cluster(3, PAUSABLE)
    B = cluster.controller_id()
    V, A = [b for b in cluster.brokers if b != B]  # V (paused, so not the controller) shuts down
    topic = unique("chan")
    (result,) = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: [V, A, B], 1: [A, V, B]})])
    assert int(result.error_code) == 0

    async def body(cache, channel):
        for _ in range(100):
            if (topic, 1) in cache.partition_states:
                break
            await asyncio.sleep(0.05)
        await channel.controlled_shutdown()  # speaking for broker V, which is paused
        return cache

    # the real broker V is paused: running, it would fetch and its leaders would take it back
    cluster.brokers[V].signal(signal.SIGSTOP)
    try:
        asyncio.run(_as_broker(cluster, V, body))

        def moved():
            now = partitions(cluster, A, topic)
            return now if all(leader != V and V not in isr for leader, _, isr in now.values()) else None

        now = wait_for(moved, 5, what="broker V's leadership and ISR places gone")
        assert now[0][0] == A and now[1][0] == A
    finally:
        cluster.brokers[V].signal(signal.SIGCONT)
