"""The coordinator runtime over an in-memory partition host: loading by replay, ownership,
unloading, and appends batched while one is in flight."""

import asyncio

from coordinator.group.config import GroupConfig
from coordinator.group.coordinator import OffsetRequest
from coordinator.group.partitioner import partition_for
from coordinator.runtime import CoordinatorRuntime
from model.errors import ErrorCode


class Host:
    def __init__(self):
        self.logs: dict[int, list] = {}
        self.epochs: dict[int, int] = {}
        self.appends: list[int] = []
        self.delay = 0.0

    def leader_epoch(self, topic, partition):
        return self.epochs.get(partition)

    def records(self, topic, partition):
        return list(self.logs.get(partition, []))

    async def append(self, topic, partition, records, timeout_ms, producer=None, appended=None):
        self.appends.append(len(records))
        if appended is not None:  # on the leader's log at once; "replicated" after the delay
            appended()
        await asyncio.sleep(self.delay)
        self.logs.setdefault(partition, []).extend(records)
        return ErrorCode.none


N = 3


def test_load_owns_append_batching_and_unload():
    async def body():
        host = Host()
        rt = CoordinatorRuntime(host, GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=0), N)
        p = partition_for("g", N)
        assert not rt.owns("group_coordinator", "g") and rt.owns("txn_coordinator", "x")
        assert rt.status("g") == ErrorCode.not_coordinator
        host.epochs[p] = 1
        rt.became_leader(p, 1)
        assert rt.owns("group_coordinator", "g") and rt.status("g") == ErrorCode.coordinator_load_in_progress
        await asyncio.sleep(0.01)
        assert rt.status("g") == ErrorCode.none
        host.delay = 0.02
        results = await asyncio.gather(*(rt.groups.commit_offsets("g", "", None, -1, {("t", i): OffsetRequest(i)})
                                         for i in range(10)))
        assert all(r == {("t", i): ErrorCode.none} for i, r in enumerate(results))
        assert host.appends == [10]  # ten concurrent commits, one append
        rt.lost_leadership(p)
        assert rt.status("g") == ErrorCode.not_coordinator and "g" not in rt.groups.groups
        host.epochs[p] = 2
        rt.became_leader(p, 2)
        await asyncio.sleep(0.01)
        assert rt.groups.fetch_offsets("g", [("t", 9)])[("t", 9)].offset == 9  # replayed from the log
        host.epochs[p] = 3  # leadership moved on without us hearing yet: appends are refused
        assert (await rt.groups.commit_offsets("g", "", None, -1, {("t", 0): OffsetRequest(1)})) == \
            {("t", 0): ErrorCode.not_coordinator}
        await rt.close()
    asyncio.run(body())
