"""ReplicaManager over real in-memory storage, fed partition states the way the metadata cache
feeds them: roles, acks, long polls and follower fetches, without sockets or ZooKeeper."""

import asyncio
import time
import uuid

import structlog

from fauxka.broker.config import config_from_dict
from fauxka.broker.metrics import BrokerMetrics
from fauxka.broker.replication.reads import FetchWant
from fauxka.broker.replication.replica_manager import ReplicaManager
from fauxka.model.errors import ErrorCode
from tests.data_helpers import batch
from fauxka.zkstore import paths as zp


class Cache:
    """The metadata cache's surface the replica manager reads (plain data and events)."""

    def __init__(self):
        self.topics, self.partition_states, self.topic_configs = {}, {}, {}
        self.all_topics = self.topics  # none being deleted here
        self.brokers, self.deleting, self.cluster_id = {}, set(), "cluster"
        self.configs_pending = set()  # topics heard of from the controller before their configs
        self._listeners = []

    def subscribe(self, listener):
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def set_partition(self, topic, partition, replicas, leader, epoch, isr):
        self.topics.setdefault(topic, zp.TopicAssignment(uuid.uuid4(), {})).partitions[partition] = replicas
        self.partition_states[(topic, partition)] = zp.PartitionState(leader, epoch, 1, isr)
        for listener in list(self._listeners):
            listener(("partition", topic, partition))


class Admin:
    def __init__(self, config):
        self.config = config

    def broker_layers(self):
        return {}, {}, self.config.originals


class Broker:
    def __init__(self, tmp_path):
        self.broker_id = 1
        self.config = config_from_dict({"broker.id": "1", "zookeeper.connect": "x", "log.dirs": str(tmp_path),
                                        "fauxka.log.in.memory": "true"})
        self.cache, self.log, self.metrics = Cache(), structlog.get_logger(), BrokerMetrics()
        self.admin = Admin(self.config)


def run(tmp_path, scenario):
    async def main():
        broker = Broker(tmp_path)
        replicas = ReplicaManager(broker.config, broker.cache, broker.admin.broker_layers, None, None,
                                  broker.metrics.registry, broker.log)
        replicas.load()
        replicas.start()
        try:
            await scenario(broker.cache, replicas)
        finally:
            await replicas.stop()
    asyncio.run(main())


def test_a_sole_replica_leader_acks_at_once(tmp_path):
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1], 1, 3, [1])
        results = await replicas.append_records({("t", 0): batch([b"a", b"b"])}, -1, 1000)
        assert (results[("t", 0)].error, results[("t", 0)].base_offset) == (ErrorCode.none, 0)
        partition = replicas.partitions[("t", 0)]
        assert partition.log.high_watermark == 2 and partition.log.latest_epoch() == 3
    run(tmp_path, scenario)


def test_acks_all_waits_for_the_follower_fetch(tmp_path):
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1, 2], 1, 0, [1, 2])
        produce = asyncio.create_task(replicas.append_records({("t", 0): batch([b"a"])}, -1, 5000))
        await asyncio.sleep(0.05)
        assert not produce.done()  # follower 2 has not fetched past the batch
        await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0)], 2, 0, 0, 1, 1 << 20)  # it has offset 0 now
        result = (await asyncio.wait_for(produce, 1))[("t", 0)]
        assert result.error == ErrorCode.none and replicas.partitions[("t", 0)].log.high_watermark == 1
    run(tmp_path, scenario)


def test_acks_all_outlives_a_new_leader_epoch_while_still_leading(tmp_path):
    """The controller bumps the epoch keeping this leader (a dead follower leaves the ISR): the
    waiting Produce is answered once replicated, as Kafka's DelayedProduce (no NOT_LEADER for an
    appended batch); a leadership lost in between answers NOT_LEADER_OR_FOLLOWER even if regained."""
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1, 2, 3], 1, 0, [1, 2, 3])
        produce = asyncio.create_task(replicas.append_records({("t", 0): batch([b"a"])}, -1, 5000))
        await asyncio.sleep(0.05)
        cache.set_partition("t", 0, [1, 2, 3], 1, 1, [1, 2])  # broker 3 gone: epoch 1, same leader
        await asyncio.sleep(0.05)
        assert not produce.done()
        await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 1)], 2, 0, 0, 1, 1 << 20)
        async with asyncio.timeout(5):
            result = (await produce)[("t", 0)]
        assert (result.error, result.base_offset) == (ErrorCode.none, 0)

        produce = asyncio.create_task(replicas.append_records({("t", 0): batch([b"b"])}, -1, 5000))
        await asyncio.sleep(0.05)
        cache.set_partition("t", 0, [1, 2, 3], 2, 2, [1, 2])  # led elsewhere a moment ...
        cache.set_partition("t", 0, [1, 2, 3], 1, 3, [1, 2])  # ... and here again
        await replicas.fetch([FetchWant("t", 0, 2, 1 << 20, 3)], 2, 0, 0, 1, 1 << 20)
        async with asyncio.timeout(5):
            result = (await produce)[("t", 0)]
        assert result.error == ErrorCode.not_leader_or_follower
    run(tmp_path, scenario)


def test_acks_all_times_out_and_checks_min_insync(tmp_path):
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1, 2], 1, 0, [1, 2])
        started = time.monotonic()
        result = (await replicas.append_records({("t", 0): batch([b"a"])}, -1, 200))[("t", 0)]
        assert result.error == ErrorCode.request_timed_out and 0.15 < time.monotonic() - started < 10
        cache.topic_configs["u"] = {"min.insync.replicas": "2"}
        cache.set_partition("u", 0, [1, 2], 1, 0, [1])
        result = (await replicas.append_records({("u", 0): batch([b"a"])}, -1, 200))[("u", 0)]
        assert result.error == ErrorCode.not_enough_replicas
    run(tmp_path, scenario)


def test_a_long_poll_is_woken_by_an_append(tmp_path):
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1], 1, 0, [1])
        started = time.monotonic()
        poll = asyncio.create_task(replicas.fetch([FetchWant("t", 0, 0, 1 << 20)], -1, 0, 5000, 1, 1 << 20))
        await asyncio.sleep(0.1)
        await replicas.append_records({("t", 0): batch([b"late"])}, 1, 1000)
        [result] = await asyncio.wait_for(poll, 4)
        assert result.records and time.monotonic() - started < 4  # woken, not the 5 s max wait (a loaded box is slow)
    run(tmp_path, scenario)


def test_roles_and_fencing(tmp_path):
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1, 2], 2, 4, [1, 2])  # broker 2 leads
        result = (await replicas.append_records({("t", 0): batch([b"a"])}, 1, 1000))[("t", 0)]
        assert result.error == ErrorCode.not_leader_or_follower
        assert replicas.current_leader("t", 0) == (2, 4)
        cache.set_partition("t", 0, [1, 2], 1, 5, [1, 2])  # now this broker, epoch 5
        [fenced] = await replicas.fetch([FetchWant("t", 0, 0, 100, 4)], -1, 0, 0, 1, 100)
        assert fenced.error == ErrorCode.fenced_leader_epoch
        [ahead] = await replicas.fetch([FetchWant("t", 0, 0, 100, 6)], -1, 0, 0, 1, 100)
        assert ahead.error == ErrorCode.unknown_leader_epoch
        result = (await replicas.append_records({("x", 0): batch([b"a"])}, 1, 1000))[("x", 0)]
        assert result.error == ErrorCode.unknown_topic_or_partition
    run(tmp_path, scenario)


def test_a_diverging_follower_is_told_where_to_truncate(tmp_path):
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1, 2], 1, 0, [1])
        await replicas.append_records({("t", 0): batch([b"a", b"b"])}, 1, 1000)  # epoch 0: offsets 0-1
        cache.set_partition("t", 0, [1, 2], 1, 2, [1])  # epoch 2 starts at 2
        await replicas.append_records({("t", 0): batch([b"c"])}, 1, 1000)
        # a follower that wrote epoch 1 up to offset 5 while it led
        [result] = await replicas.fetch([FetchWant("t", 0, 5, 100, 2, 1)], 2, 0, 0, 1, 100)
        assert result.diverging_epoch == (0, 2) and not result.records
    run(tmp_path, scenario)



def test_on_appended_runs_before_the_long_polls_are_woken(tmp_path):
    """So what a coordinator appends on being woken by it (the transaction coordinator's next Ongoing
    after Complete*) is in the log when the followers' long polls read it: one fetch for both."""
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1, 2], 1, 0, [1, 2])
        order, wake = [], replicas.purgatory.wake
        replicas.purgatory.wake = lambda key: (order.append(("wake", key)), wake(key))
        await replicas.append_records({("t", 0): batch([b"a"])}, 1, 1000,
                                      on_appended=lambda results: order.append(("appended", sorted(results))))
        assert order == [("appended", [("t", 0)]), ("wake", ("t", 0))]
    run(tmp_path, scenario)


def test_a_parked_follower_fetch_rereads_only_when_there_is_something_to_read(tmp_path):
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1, 2, 3], 1, 0, [1, 2, 3])
        await replicas.append_records({("t", 0): batch([b"a"])}, 1, 1000)
        reads, read_all = [], replicas.reader._read_all
        replicas.reader._read_all = lambda *args: reads.append(1) or read_all(*args)
        parked = asyncio.create_task(replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0)], 2, 0, 5000, 1, 1 << 20))
        await asyncio.sleep(0.05)
        assert reads == [1] and not parked.done()  # at the log end: it waits
        await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0)], 3, 0, 0, 1, 1 << 20)  # moves the high watermark
        await asyncio.sleep(0.05)
        assert len(reads) == 2 and not parked.done()  # woken, nothing past its offset: no read of its own
        await replicas.append_records({("t", 0): batch([b"b"])}, 1, 1000)
        [result] = await asyncio.wait_for(parked, 1)
        assert result.records and len(reads) == 3
    run(tmp_path, scenario)


def test_appends_in_flight_together_are_acknowledged_in_log_order(tmp_path):
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1, 2], 1, 0, [1, 2])
        appender = replicas.appender
        first = appender.append_local({("t", 0): batch([b"a"])}, -1)
        second = appender.append_local({("t", 0): batch([b"b"])}, -1)  # in the log before the first is acked
        assert replicas.partitions[("t", 0)].log.log_end_offset == 2
        waits = asyncio.gather(appender.wait_for_acks(first, 5000), appender.wait_for_acks(second, 5000))
        await asyncio.sleep(0.05)
        await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0)], 2, 0, 0, 1, 1 << 20)  # the follower has the first
        await asyncio.sleep(0.05)
        assert replicas.partitions[("t", 0)].log.high_watermark == 1 and not waits.done()
        await replicas.fetch([FetchWant("t", 0, 2, 1 << 20, 0)], 2, 0, 0, 1, 1 << 20)
        await asyncio.wait_for(waits, 1)
        assert second[("t", 0)].error == ErrorCode.none
    run(tmp_path, scenario)


def test_a_follower_fetch_wakes_waiters_only_when_a_watermark_moves(tmp_path):
    """Partition.updateFollowerFetchState: delayed operations are tried again only when the high or
    low watermark moved. A follower's fetch names every partition of its session; waking them all
    on each fetch re-ran every long poll parked on any of them (librdkafka's suite: hundreds of
    partitions, acks=all and transactions slowed down with each topic)."""
    async def scenario(cache, replicas):
        cache.set_partition("t", 0, [1, 2, 3], 1, 0, [1, 2, 3])
        await replicas.append_records({("t", 0): batch([b"a"])}, 1, 1000)
        woken, wake = [], replicas.purgatory.wake
        replicas.purgatory.wake = lambda key: (woken.append(key), wake(key))
        await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0, log_start_offset=0)], 2, 0, 0, 1, 1 << 20)
        assert woken == [("t", 0)]  # follower 2 heard of, but 3 holds the high watermark: its start moved
        await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0, log_start_offset=0)], 2, 0, 0, 1, 1 << 20)
        assert woken == [("t", 0)]  # the same again: nothing moved, nobody woken
        await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0, log_start_offset=0)], 3, 0, 0, 1, 1 << 20)
        assert len(woken) == 2 and replicas.partitions[("t", 0)].log.high_watermark == 1
        await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0, log_start_offset=0)], 3, 0, 0, 1, 1 << 20)
        assert len(woken) == 2
    run(tmp_path, scenario)


class HeldController:
    """AlterPartition answered only when `answer` is set: the controller has written the new ISR
    (the added follower may be elected from now on), its answer is still on the way."""

    def __init__(self):
        self.asked: list[list[int]] = []
        self.answer = asyncio.Event()

    async def alter_partition(self, topic, topic_id, partition, leader_epoch, new_isr, partition_epoch):
        from fauxka.broker.controller_channel import IsrResult

        self.asked.append(list(new_isr))
        await self.answer.wait()
        return IsrResult(ErrorCode.none, 1, leader_epoch, list(new_isr), partition_epoch + 1)


def test_acks_all_waits_for_a_follower_joining_the_isr_while_its_expansion_is_in_flight(tmp_path):
    """Kafka's maximal ISR. Before: with follower 3's expansion written but not yet answered, a
    record only followers 2 had was acknowledged; electing 3 then lost it (a chaos run's acked
    offset commit, gone after its coordinator moved)."""
    async def main():
        broker, controller = Broker(tmp_path), HeldController()
        replicas = ReplicaManager(broker.config, broker.cache, broker.admin.broker_layers, None, controller,
                                  broker.metrics.registry, broker.log)
        replicas.load()
        replicas.start()
        try:
            broker.cache.set_partition("t", 0, [1, 2, 3], 1, 0, [1, 2])
            first = asyncio.create_task(replicas.append_records({("t", 0): batch([b"a"])}, -1, 5000))
            await asyncio.sleep(0)
            await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0)], 2, 0, 0, 1, 1 << 20)
            assert (await first)[("t", 0)].error == ErrorCode.none
            await replicas.fetch([FetchWant("t", 0, 1, 1 << 20, 0)], 3, 0, 0, 1, 1 << 20)  # 3 caught up: joins
            await asyncio.sleep(0.01)
            assert controller.asked == [[1, 2, 3]]
            second = asyncio.create_task(replicas.append_records({("t", 0): batch([b"b"])}, -1, 5000))
            await asyncio.sleep(0)
            await replicas.fetch([FetchWant("t", 0, 2, 1 << 20, 0)], 2, 0, 0, 1, 1 << 20)
            await asyncio.sleep(0.05)
            assert not second.done() and replicas.partitions[("t", 0)].log.high_watermark == 1  # 3 lacks b
            await replicas.fetch([FetchWant("t", 0, 2, 1 << 20, 0)], 3, 0, 0, 1, 1 << 20)
            async with asyncio.timeout(2):
                assert (await second)[("t", 0)].error == ErrorCode.none
            controller.answer.set()
            async with asyncio.timeout(2):
                while replicas.partitions[("t", 0)].isr != [1, 2, 3]:
                    await asyncio.sleep(0.01)
        finally:
            controller.answer.set()
            await replicas.stop()
    asyncio.run(main())


def test_a_follower_fetch_for_a_partition_this_broker_is_to_lead_waits_for_its_leadership(tmp_path):
    """The controller tells a new partition's leader and followers side by side: a follower's fetch
    may come before the leader's LeaderAndIsr. It waits (as a long poll) rather than answering
    UNKNOWN_TOPIC_OR_PARTITION at once, which kept the follower back replica.fetch.backoff.ms."""
    async def scenario(cache, replicas):
        poll = asyncio.create_task(replicas.fetch([FetchWant("new", 0, 0, 1 << 20, 0)], 2, 0, 30000, 1, 1 << 20))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not poll.done()  # not known here yet
        cache.set_partition("new", 0, [1, 2], 1, 0, [1, 2])  # now led here
        for _ in range(20):
            await asyncio.sleep(0)
        assert not poll.done()  # nothing to read yet: a long poll like any other
        await replicas.append_records({("new", 0): batch([b"first"])}, 1, 1000)
        [result] = await asyncio.wait_for(poll, 10)
        assert result.error == ErrorCode.none and result.records

        cache.set_partition("old", 0, [1, 2], 2, 3, [1, 2])  # broker 2 leads, epoch 3
        [stale] = await asyncio.wait_for(
            replicas.fetch([FetchWant("old", 0, 0, 1 << 20, 3)], 3, 0, 30000, 1, 1 << 20), 10)
        assert stale.error == ErrorCode.not_leader_or_follower  # the follower is behind: at once
        [consumer] = await asyncio.wait_for(
            replicas.fetch([FetchWant("none", 0, 0, 1 << 20, 0)], -1, 0, 30000, 1, 1 << 20), 10)
        assert consumer.error == ErrorCode.unknown_topic_or_partition  # a consumer is answered at once
    run(tmp_path, scenario)
