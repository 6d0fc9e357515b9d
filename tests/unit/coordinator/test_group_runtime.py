"""The coordinator runtime under the group coordinator, over an in-memory partition writer: loading
by replay, ownership, unloading, appends batched per turn of the event loop and pipelined: a batch
goes to the log while earlier ones wait for their acks, and batches are answered in log order."""

import asyncio

from fauxka.coordinator.group.config import GroupConfig
from fauxka.coordinator.group.coordinator import GroupCoordinator, OffsetRequest
from fauxka.coordinator.partitioner import partition_for
from fauxka.coordinator.runtime import CoordinatorRuntime
from fauxka.model.errors import ErrorCode
from fauxka.model.topic_names import GROUP_METADATA_TOPIC


class Host:
    def __init__(self):
        self.logs: dict[int, list] = {}
        self.epochs: dict[int, int] = {}
        self.appends: list[int] = []
        self.delay = 0.0
        self.manual = False
        self.released: asyncio.Event | None = None

    def leader_epoch(self, topic, partition):
        return self.epochs.get(partition)

    def read_records(self, topic, partition):
        return list(self.logs.get(partition, []))

    async def append_batch(self, topic, partition, records, timeout_ms, producer=None, appended=None):
        self.appends.append(len(records))
        if appended is not None:  # on the leader's log at once; "replicated" after the delay
            appended()
        await asyncio.sleep(self.delay)
        self.logs.setdefault(partition, []).extend(records)
        return ErrorCode.none

    def begin_append(self, topic, partition, records, timeout_ms):
        """In the log at once; acknowledged after `delay`, or when the test sets the batch's event."""
        self.appends.append(len(records))
        self.logs.setdefault(partition, []).extend(records)
        released = self.released = asyncio.Event()

        async def acked():
            if self.manual:
                await released.wait()
            else:
                await asyncio.sleep(self.delay)
            return ErrorCode.none
        return acked()


N = 3


def group_runtime(host, config, partitions):
    """The group coordinator over its runtime, as fauxka/broker/coordination/coordinators.py makes them."""
    runtime = CoordinatorRuntime(GROUP_METADATA_TOPIC, host, partitions, append_timeout_ms=5000)
    groups = GroupCoordinator(config, runtime)
    runtime.serve(groups)
    return runtime, groups


async def until(condition, timeout_s=10.0):
    """Yield to the loop until `condition()` holds; AssertionError at the deadline."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.001)


def test_load_owns_append_batching_and_unload():
    async def body():
        host = Host()
        rt, groups = group_runtime(host, GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=0), N)
        p = partition_for("g", N)
        assert not rt.owns("g")
        assert rt.status("g") == ErrorCode.not_coordinator
        host.epochs[p] = 1
        rt.became_leader(p, 1)
        assert rt.owns("g") and rt.status("g") == ErrorCode.coordinator_load_in_progress
        await asyncio.sleep(0.01)
        assert rt.status("g") == ErrorCode.none
        host.delay = 0.02
        results = await asyncio.gather(*(groups.commit_offsets("g", "", None, -1, {("t", i): OffsetRequest(i)})
                                         for i in range(10)))
        assert all(r == {("t", i): ErrorCode.none} for i, r in enumerate(results))
        assert host.appends == [10]  # ten concurrent commits, one append
        rt.lost_leadership(p)
        assert rt.status("g") == ErrorCode.not_coordinator and "g" not in groups.groups
        host.epochs[p] = 2
        rt.became_leader(p, 2)
        await asyncio.sleep(0.01)
        assert groups.fetch_offsets("g", [("t", 9)])[("t", 9)].offset == 9  # replayed from the log
        host.epochs[p] = 3  # leadership moved on without us hearing yet: appends are refused
        assert (await groups.commit_offsets("g", "", None, -1, {("t", 0): OffsetRequest(1)})) == \
            {("t", 0): ErrorCode.not_coordinator}
        await rt.close()
        groups.close()
    asyncio.run(body())


def test_batches_are_pipelined_and_answered_in_log_order():
    async def body():
        host = Host()
        rt, groups = group_runtime(host, GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=0), N)
        p = partition_for("g", N)
        host.epochs[p] = 1
        rt.became_leader(p, 1)
        await until(lambda: rt.status("g") == ErrorCode.none)
        host.manual = True
        first = asyncio.ensure_future(groups.commit_offsets("g", "", None, -1, {("t", 0): OffsetRequest(1)}))
        await until(lambda: len(host.appends) == 1)
        first_released = host.released
        second = asyncio.ensure_future(groups.commit_offsets("g", "", None, -1, {("t", 0): OffsetRequest(2)}))
        await until(lambda: len(host.appends) == 2)
        assert host.appends == [1, 1] and len(host.logs[p]) == 2  # the second is in the log, not queued behind
        second_released = host.released
        extra = asyncio.ensure_future(groups.commit_offsets("g", "", None, -1, {("t", 1): OffsetRequest(5)}))
        for _ in range(10):
            await asyncio.sleep(0)
        assert host.appends == [1, 1]  # two batches in flight: the next one waits for the first answer
        second_released.set()  # the later batch's acks first: it still waits for the earlier one
        for _ in range(10):
            await asyncio.sleep(0)
        assert not first.done() and not second.done()
        assert groups.fetch_offsets("g", [("t", 0)])[("t", 0)] is None  # nothing visible before its acks
        first_released.set()
        assert await second == {("t", 0): ErrorCode.none} and first.result() == {("t", 0): ErrorCode.none}
        await until(lambda: len(host.appends) == 3)  # appended once the first was answered
        host.released.set()
        assert await extra == {("t", 1): ErrorCode.none}
        assert groups.fetch_offsets("g", [("t", 0)])[("t", 0)].offset == 2  # the later commit wins
        host.released = None
        third = asyncio.ensure_future(groups.commit_offsets("g", "", None, -1, {("t", 0): OffsetRequest(3)}))
        await until(lambda: host.released is not None)
        await rt.close()  # a batch still waiting for its acks is answered, not left hanging
        assert await third == {("t", 0): ErrorCode.not_coordinator}
    asyncio.run(body())
