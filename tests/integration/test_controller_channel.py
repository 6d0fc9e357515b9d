"""broker/controller_channel.py as the data plane uses it: a broker's client of the controller,
run here in the test process on a real metadata cache of a real cluster, speaking for one of
its brokers (AlterPartition as that partition's leader, AllocateProducerIds, ControlledShutdown)."""

import asyncio
from types import SimpleNamespace

import structlog

from broker.config import load_config
from broker.controller_channel import ControllerChannel
from broker.controller_link import ControllerLink
from broker.metadata_cache import MetadataCache
from model.errors import ErrorCode
from tests.admin_helpers import create_topics, topic_spec, unique
from tests.harness import wait_for
from tests.integration.test_leadership import partitions
from zkstore import ZkStore


async def _as_broker(cluster, broker_id: int, body):
    log = structlog.get_logger()
    zk = ZkStore(cluster.zk_connect, 10000, log)
    await zk.start(10)
    cache = MetadataCache(zk, log)
    cache.start()
    await cache.wait_synced(10)
    broker = SimpleNamespace(broker_id=broker_id, cache=cache, log=log,
                             config=load_config(cluster.brokers[broker_id].config))
    broker.controller_link = ControllerLink(broker)
    channel = ControllerChannel(broker)
    try:
        return await body(cache, channel)
    finally:
        await channel.close()
        cache.stop()
        await zk.stop()


def test_alter_partition_and_producer_ids_through_the_channel(make_cluster):
    cluster = make_cluster(3)
    topic = unique("chan")
    (result,) = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: [2, 1, 3]})])
    assert int(result.error_code) == 0

    async def body(cache, channel):
        wait = 0
        while (topic, 0) not in cache.partition_states and wait < 100:
            await asyncio.sleep(0.05)
            wait += 1
        state = cache.partition_states[(topic, 0)]
        topic_id = cache.topics[topic].topic_id
        assert (state.leader, state.zk_version) == (2, 0)
        shrunk = await channel.alter_partition(topic, topic_id, 0, state.leader_epoch, [2, 1], state.zk_version)
        assert (shrunk.error, shrunk.leader, shrunk.leader_epoch, shrunk.isr, shrunk.partition_epoch) == \
            (ErrorCode.none, 2, state.leader_epoch, [2, 1], 1)
        stale = await channel.alter_partition(topic, topic_id, 0, state.leader_epoch, [2], 0)
        assert stale.error == ErrorCode.invalid_update_version
        fenced = await channel.alter_partition(topic, topic_id, 0, state.leader_epoch - 1, [2], 1)
        assert fenced.error == ErrorCode.fenced_leader_epoch
        ineligible = await channel.alter_partition(topic, topic_id, 0, state.leader_epoch, [2, 1, 9], 1)
        assert ineligible.error == ErrorCode.ineligible_replica
        while cache.partition_states[(topic, 0)].zk_version != 1:  # the cache learns it from its watch
            await asyncio.sleep(0.01)
        assert cache.partition_states[(topic, 0)].isr == [2, 1]
        return [await channel.allocate_producer_ids() for _ in range(3)]

    blocks = asyncio.run(_as_broker(cluster, 2, body))
    assert blocks == [(0, 1000), (1000, 1000), (2000, 1000)]


def test_controlled_shutdown_through_the_channel_moves_leaderships(make_cluster):
    cluster = make_cluster(3)
    topic = unique("chan")
    (result,) = create_topics(cluster.controller_address(), [topic_spec(topic, assignments={0: [3, 1, 2], 1: [1, 3, 2]})])
    assert int(result.error_code) == 0

    async def body(cache, channel):
        while (topic, 1) not in cache.partition_states:
            await asyncio.sleep(0.05)
        await channel.controlled_shutdown()  # speaking for broker 3, which keeps running
        return cache

    asyncio.run(_as_broker(cluster, 3, body))

    def moved():
        now = partitions(cluster, 1, topic)
        return now if all(leader != 3 and 3 not in isr for leader, _, isr in now.values()) else None

    now = wait_for(moved, 5, what="broker 3's leadership and ISR places gone")
    assert now[0][0] == 1 and now[1][0] == 1
