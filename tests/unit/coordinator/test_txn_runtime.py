"""The transaction runtime over an in-memory partition host (loading by replay, ownership, the
leader-epoch check of appends, unloading), and the group side of transactional offsets."""

import asyncio

from coordinator.group.config import GroupConfig
from coordinator.group.coordinator import GroupCoordinator, OffsetRequest
from coordinator.group.partitioner import partition_for
from coordinator.txn.runtime import TxnRuntime
from coordinator.txn.state import TxnState
from model.errors import ErrorCode
from tests.unit.coordinator.test_runtime import Host

N = 3


def _runtime(host, sent):
    ids = iter(range(7000, 8000))

    async def allocate():
        return next(ids)

    async def markers(*args):
        sent.append(args)
    return TxnRuntime(host, N, allocate, markers)


def test_load_serve_unload_and_reload_completes_a_prepared_commit():
    async def body():
        host, sent = Host(), []
        rt = _runtime(host, sent)
        p = partition_for("tid", N)
        assert rt.status("tid") == ErrorCode.not_coordinator and not rt.owns("txn_coordinator", "tid")
        assert rt.owns("group_coordinator", "tid")  # not this runtime's role to refuse
        host.epochs[p] = 4
        rt.became_leader(p, 4)
        assert rt.status("tid") == ErrorCode.coordinator_load_in_progress
        await asyncio.sleep(0.01)
        assert rt.status("tid") == ErrorCode.none
        assert (await rt.txns.init_producer_id("tid", 10000))[0] == ErrorCode.none
        await rt.txns.add_partitions("tid", 7000, 0, {("t", 1)})
        host.epochs[p] = 5  # leadership moved on without us hearing yet: appends refused
        assert await rt.txns.end_txn("tid", 7000, 0, True) == ErrorCode.not_coordinator
        host.epochs[p] = 4
        meta = rt.txns.txns["tid"]
        assert await rt.txns._write(meta, TxnState.PREPARE_COMMIT) == ErrorCode.none  # then the broker dies
        rt.lost_leadership(p)
        assert rt.txns.txns == {} and rt.status("tid") == ErrorCode.not_coordinator
        await rt.close()
        again_sent = []
        again = _runtime(host, again_sent)
        host.epochs[p] = 6
        again.became_leader(p, 6)
        await asyncio.sleep(0.05)
        assert again_sent == [(7000, 0, True, 6, {("t", 1)})]  # markers with the new coordinator epoch
        assert again.txns.txns["tid"].state is TxnState.COMPLETE_COMMIT
        await again.close()
    asyncio.run(body())


def test_transactional_offsets_become_visible_only_on_commit():
    async def body():
        host = Host()
        gc = GroupCoordinator(GroupConfig(), _GroupLog(host))
        part = partition_for("g", 50)
        offsets = {("t", 0): OffsetRequest(5), ("t", 1): OffsetRequest(9)}
        assert gc.txn_commit_offsets("g", 11, "", None, -1, offsets) == dict.fromkeys(offsets, ErrorCode.none)
        assert gc.fetch_offsets("g", [("t", 0)]) == {("t", 0): None}
        assert gc.pending_txn_partitions("g") == {("t", 0), ("t", 1)}
        await gc.complete_txn_offsets(11, False, lambda g: partition_for(g, 50), part)  # ABORT
        assert gc.pending_txn_partitions("g") == set() and gc.fetch_offsets("g", [("t", 0)]) == {("t", 0): None}
        gc.txn_commit_offsets("g", 11, "", None, -1, offsets)
        await gc.complete_txn_offsets(11, True, lambda g: partition_for(g, 50), (part + 1) % 50)  # another partition
        assert gc.pending_txn_partitions("g") == {("t", 0), ("t", 1)}
        await gc.complete_txn_offsets(11, True, lambda g: partition_for(g, 50), part)
        assert gc.fetch_offsets("g", [("t", 0)])[("t", 0)].offset == 5
        assert len(host.logs[0]) == 2  # appended as ordinary offset commits once committed
        assert gc.txn_commit_offsets("", 11, "", None, -1, offsets) == dict.fromkeys(offsets, ErrorCode.invalid_group_id)
        gc.close()
    asyncio.run(body())


class _GroupLog:
    def __init__(self, host):
        self.host = host

    async def append(self, group_id, records):
        return await self.host.append("__consumer_offsets", 0, records, 1000)
