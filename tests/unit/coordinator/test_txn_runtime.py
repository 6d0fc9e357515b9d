"""The transaction runtime over an in-memory partition host (loading by replay, ownership, the
leader-epoch check of appends, unloading), and the group side of transactional offsets."""

import asyncio

from coordinator.group.config import GroupConfig
from coordinator.group.coordinator import GroupCoordinator, OffsetRequest
from coordinator.group.partitioner import partition_for
from coordinator.group.records import OffsetKey, OffsetValue, encode_key, encode_offset_value
from coordinator.runtime import CoordinatorRuntime
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
        mine = partition_for("g", 50)
        offsets = {("t", 0): OffsetRequest(5), ("t", 1): OffsetRequest(9)}
        assert await gc.txn_commit_offsets("g", 11, 2, "", None, -1, offsets) == dict.fromkeys(offsets, ErrorCode.none)
        assert host.transactional == [(11, 2, 2)]  # one transactional batch of the producer, two records
        assert gc.fetch_offsets("g", [("t", 0)]) == {("t", 0): None}
        assert gc.pending_txn_partitions("g") == {("t", 0), ("t", 1)}
        gc.complete_txn_offsets(11, False, lambda g: partition_for(g, 50) == mine)  # ABORT
        assert gc.pending_txn_partitions("g") == set() and gc.fetch_offsets("g", [("t", 0)]) == {("t", 0): None}
        await gc.txn_commit_offsets("g", 11, 2, "", None, -1, offsets)
        gc.complete_txn_offsets(11, True, lambda g: False)  # another partition's marker
        assert gc.pending_txn_partitions("g") == {("t", 0), ("t", 1)}
        gc.complete_txn_offsets(11, True, lambda g: partition_for(g, 50) == mine)
        assert gc.fetch_offsets("g", [("t", 0)])[("t", 0)].offset == 5
        assert await gc.txn_commit_offsets("", 11, 2, "", None, -1, offsets) == dict.fromkeys(
            offsets, ErrorCode.invalid_group_id)
        gc.close()
    asyncio.run(body())


def test_loading_replays_transactional_offsets_until_their_markers():
    async def body():
        host = Host()
        rt = CoordinatorRuntime(host, GroupConfig(), 1)
        key = encode_key(OffsetKey("g", "t", 0))
        host.epochs[0] = 1
        host.logs[0] = [(key, encode_offset_value(OffsetValue(3))),
                        (key, encode_offset_value(OffsetValue(7)), 21, None), (None, None, 21, True),
                        (encode_key(OffsetKey("g", "t", 1)), encode_offset_value(OffsetValue(8)), 22, None),
                        (None, None, 22, False),
                        (encode_key(OffsetKey("g", "t", 2)), encode_offset_value(OffsetValue(9)), 23, None)]
        rt.became_leader(0, 1)
        await asyncio.sleep(0.01)
        offsets = rt.groups.fetch_offsets("g", None)
        assert {tp: c.offset for tp, c in offsets.items()} == {("t", 0): 7}  # committed; aborted; still open
        assert rt.groups.pending_txn_partitions("g") == {("t", 2)}
        await rt.close()
    asyncio.run(body())


class _GroupLog:
    def __init__(self, host):
        self.host = host
        host.transactional = []

    async def append(self, group_id, records):
        return await self.host.append("__consumer_offsets", 0, records, 1000)

    async def append_transactional(self, group_id, records, producer_id, epoch):
        self.host.transactional.append((producer_id, epoch, len(records)))
        return await self.host.append("__consumer_offsets", 0, records, 1000)
