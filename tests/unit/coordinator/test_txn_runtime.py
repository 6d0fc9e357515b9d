"""The coordinator runtime under the transaction coordinator, over an in-memory partition writer
(loading by replay, ownership, the leader-epoch check of appends, unloading), and the group side
of transactional offsets."""

import asyncio

from fauxka.coordinator.group.config import GroupConfig
from fauxka.coordinator.group.coordinator import GroupCoordinator, OffsetRequest
from fauxka.coordinator.partitioner import partition_for
from fauxka.coordinator.group.records import OffsetKey, OffsetValue, encode_key, encode_offset_value
from fauxka.coordinator.runtime import CoordinatorRuntime
from fauxka.coordinator.txn.coordinator import TransactionCoordinator
from fauxka.coordinator.txn.state import TxnState
from fauxka.model.errors import ErrorCode
from fauxka.model.topic_names import TRANSACTION_STATE_TOPIC
from tests.unit.coordinator.test_group_runtime import Host, group_runtime

N = 3


def _runtime(host, sent):
    ids = iter(range(7000, 8000))

    async def allocate():
        return next(ids)

    class Markers:
        async def send_markers(self, *args):
            sent.append(args)
    runtime = CoordinatorRuntime(TRANSACTION_STATE_TOPIC, host, N, append_timeout_ms=30000)
    txns = TransactionCoordinator(runtime, allocate, Markers())
    runtime.serve(txns)
    return runtime, txns


def test_load_serve_unload_and_reload_completes_a_prepared_commit():
    async def body():
        host, sent = Host(), []
        rt, txns = _runtime(host, sent)
        p = partition_for("tid", N)
        assert rt.status("tid") == ErrorCode.not_coordinator and not rt.owns("tid")
        host.epochs[p] = 4
        rt.became_leader(p, 4)
        assert rt.status("tid") == ErrorCode.coordinator_load_in_progress
        await asyncio.sleep(0.01)
        assert rt.status("tid") == ErrorCode.none
        assert (await txns.init_producer_id("tid", 10000))[0] == ErrorCode.none
        await txns.add_partitions("tid", 7000, 0, {("t", 1)})
        host.epochs[p] = 5  # leadership moved on without us hearing yet: appends refused
        assert await txns.end_txn("tid", 7000, 0, True) == ErrorCode.not_coordinator
        host.epochs[p] = 4
        meta = txns.txns["tid"]
        assert await txns._write(meta, TxnState.PREPARE_COMMIT) == ErrorCode.none  # then the broker dies
        rt.lost_leadership(p)
        assert txns.txns == {} and rt.status("tid") == ErrorCode.not_coordinator
        await rt.close()
        await txns.close()
        again_sent = []
        again, again_txns = _runtime(host, again_sent)
        host.epochs[p] = 6
        again.became_leader(p, 6)
        await asyncio.sleep(0.05)
        assert again_sent == [(7000, 0, True, 6, {("t", 1)})]  # markers with the new coordinator epoch
        assert again_txns.txns["tid"].state is TxnState.COMPLETE_COMMIT
        await again.close()
        await again_txns.close()
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
        rt, groups = group_runtime(host, GroupConfig(), 1)
        key = encode_key(OffsetKey("g", "t", 0))
        host.epochs[0] = 1
        host.logs[0] = [(key, encode_offset_value(OffsetValue(3))),
                        (key, encode_offset_value(OffsetValue(7)), 21, None), (None, None, 21, True),
                        (encode_key(OffsetKey("g", "t", 1)), encode_offset_value(OffsetValue(8)), 22, None),
                        (None, None, 22, False),
                        (encode_key(OffsetKey("g", "t", 2)), encode_offset_value(OffsetValue(9)), 23, None)]
        rt.became_leader(0, 1)
        await asyncio.sleep(0.01)
        offsets = groups.fetch_offsets("g", None)
        assert {tp: c.offset for tp, c in offsets.items()} == {("t", 0): 7}  # committed; aborted; still open
        assert groups.pending_txn_partitions("g") == {("t", 2)}
        await rt.close()
        groups.close()
    asyncio.run(body())


class _GroupLog:
    """The runtime's writes, to partition 0 of the host, with no leadership to check."""

    def __init__(self, host):
        self.host = host
        host.transactional = []

    async def write_records(self, group_id, records):
        return await self.host.append_batch("__consumer_offsets", 0, records, 1000)

    async def write_batch(self, group_id, records, *, producer=None, appended=None, timeout_ms=None):
        self.host.transactional.append((*producer, len(records)))
        return await self.host.append_batch("__consumer_offsets", 0, records, 1000, producer)


def _offset(tp, offset, pid=None):
    record = (encode_key(OffsetKey("g", *tp)), encode_offset_value(OffsetValue(offset)))
    return record if pid is None else (*record, pid, None)


def test_an_abort_marker_drops_offsets_a_later_commit_of_the_producer_would_otherwise_commit():
    async def body():
        host = Host()
        rt, groups = group_runtime(host, GroupConfig(), 1)
        host.epochs[0] = 1
        host.logs[0] = [_offset(("t", 0), 3), _offset(("t", 1), 4),
                        _offset(("t", 0), 103, 21), _offset(("t", 1), 104, 21), (None, None, 21, False),
                        _offset(("t", 1), 50, 21), (None, None, 21, True)]  # the re-initialised producer
        rt.became_leader(0, 1)
        await asyncio.sleep(0.01)
        offsets = groups.fetch_offsets("g", None)
        assert {tp: c.offset for tp, c in offsets.items()} == {("t", 0): 3, ("t", 1): 50}
        assert groups.pending_txn_partitions("g") == set()
        await rt.close()
        groups.close()
    asyncio.run(body())


class _LiveHost(Host):
    """read_records() follows the log as it grows, as the replica manager's log does."""

    def read_records(self, topic, partition):
        log = self.logs.get(partition, [])
        i = 0
        while i < len(log):
            yield log[i]
            i += 1


def test_an_abort_marker_written_while_the_partition_loads_drops_the_offsets_loaded_after_it():
    async def body():
        host = _LiveHost()
        rt, groups = group_runtime(host, GroupConfig(), 1)
        host.epochs[0] = 1
        host.logs[0] = [_offset(("t", 0), 3)] + [_offset(("u", 0), i) for i in range(1500)]
        host.logs[0] += [_offset(("t", 0), 103, 21)]  # the open transaction's offsets, past a yield of the load
        rt.became_leader(0, 1)
        for _ in range(2):
            await asyncio.sleep(0)  # the load is past its first 1000 records, not yet at the offsets
        assert rt.status("g") == ErrorCode.coordinator_load_in_progress
        host.logs[0].append((None, None, 21, False))  # WriteTxnMarkers: the timed-out transaction's ABORT
        groups.txn_marker_written(21, False, 0)
        await asyncio.sleep(0.05)
        assert rt.status("g") == ErrorCode.none and groups.pending_txn_partitions("g") == set()
        host.logs[0] += [_offset(("t", 1), 7, 21), (None, None, 21, True)]
        await groups.txn_commit_offsets("g", 21, 2, "", None, -1, {("t", 1): OffsetRequest(7)})
        groups.txn_marker_written(21, True, 0)  # the next transaction commits only its own offsets
        assert groups.fetch_offsets("g", [("t", 0)])[("t", 0)].offset == 3
        assert groups.fetch_offsets("g", [("t", 1)])[("t", 1)].offset == 7
        await rt.close()
        groups.close()
    asyncio.run(body())


def test_pending_offsets_leave_with_their_partition():
    async def body():
        host = Host()
        rt, groups = group_runtime(host, GroupConfig(), 1)
        host.epochs[0] = 1
        rt.became_leader(0, 1)
        await asyncio.sleep(0.01)
        await groups.txn_commit_offsets("g", 21, 0, "", None, -1, {("t", 0): OffsetRequest(103)})
        assert groups.pending_txn_partitions("g") == {("t", 0)}
        rt.lost_leadership(0)
        groups.txn_marker_written(21, True, 0)  # a marker of a partition no longer ours completes nothing here
        assert groups.pending_txn_offsets == {} and groups.groups == {}
        await rt.close()
        groups.close()
    asyncio.run(body())
