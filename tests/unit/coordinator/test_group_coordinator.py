"""The classic group protocol against an in-memory record log (pure logic; the log is a list)."""

import asyncio

import pytest

from fauxka.coordinator.group.config import GroupConfig
from fauxka.coordinator.group.coordinator import GroupCoordinator, OffsetRequest
from fauxka.coordinator.group.records import decode_key
from fauxka.model.errors import ErrorCode


class MemoryLog:
    def __init__(self):
        self.records: list[tuple[bytes, bytes | None]] = []
        self.fail: ErrorCode | None = None

    async def write_records(self, group_id, records):
        if self.fail is not None:
            return self.fail
        self.records.extend(records)
        return ErrorCode.none

    async def write_batch(self, group_id, records, *, producer=None, appended=None, timeout_ms=None):
        return await self.write_records(group_id, records)


def make(**overrides):
    config = GroupConfig(min_session_timeout_ms=10, initial_rebalance_delay_ms=0, **overrides)
    log = MemoryLog()
    return GroupCoordinator(config, log), log


PROTOCOLS = [("range", b"\x00\x00\x00\x00\x00\x01\x00\x01t")]


async def join(gc, member_id="", *, group="g", instance=None, session=1000, rebalance=1000, protocols=PROTOCOLS,
               require_known=True, client="c"):
    return await gc.join(group, member_id, instance, client, "/127.0.0.1", session, rebalance, "consumer",
                         protocols, require_known)


async def join_new(gc, **kw):
    first = await join(gc, **kw)
    assert first.error == ErrorCode.member_id_required
    return await join(gc, first.member_id, **kw)


def run(coro):
    return asyncio.run(coro)


def test_member_id_required_then_join_alone():
    async def body():
        gc, _ = make()
        first = await join(gc)
        assert first.error == ErrorCode.member_id_required and first.member_id.startswith("c-")
        joined = await join(gc, first.member_id)
        assert joined.error == ErrorCode.none
        assert joined.generation == 1 and joined.leader == first.member_id and joined.protocol == "range"
        assert [m[0] for m in joined.members] == [first.member_id]
        synced = await gc.sync("g", 1, first.member_id, None, "consumer", "range", {first.member_id: b"A"})
        assert synced.error == ErrorCode.none and synced.assignment == b"A"
        assert gc.describe("g").state == "Stable"
        gc.close()
    run(body())


def test_second_member_triggers_rebalance_and_both_get_assignments():
    async def body():
        gc, log = make()
        a = await join_new(gc)
        await gc.sync("g", 1, a.member_id, None, None, None, {a.member_id: b"all"})
        b_task = asyncio.create_task(join_new(gc))
        await asyncio.sleep(0.01)
        assert gc.heartbeat("g", a.member_id, None, 1) == ErrorCode.rebalance_in_progress
        a2 = await join(gc, a.member_id)
        b = await b_task
        assert a2.generation == b.generation == 2
        assert a2.leader == a.member_id and len(a2.members) == 2 and b.members == []
        leader_sync = asyncio.create_task(gc.sync("g", 2, a.member_id, None, None, None,
                                                  {a.member_id: b"A", b.member_id: b"B"}))
        follower = await gc.sync("g", 2, b.member_id, None, None, None, {})
        assert follower.assignment == b"B" and (await leader_sync).assignment == b"A"
        assert gc.heartbeat("g", b.member_id, None, 2) == ErrorCode.none
        assert gc.heartbeat("g", b.member_id, None, 1) == ErrorCode.illegal_generation
        assert gc.heartbeat("g", "nobody", None, 2) == ErrorCode.unknown_member_id
        assert any(decode_key(k).__class__.__name__ == "GroupKey" for k, _ in log.records)
        gc.close()
    run(body())


def test_leave_and_session_expiry_rebalance():
    async def body():
        gc, _ = make()
        a = await join_new(gc, session=50)
        await gc.sync("g", 1, a.member_id, None, None, None, {})
        b_task = asyncio.create_task(join_new(gc, session=50))
        await asyncio.sleep(0.005)
        await join(gc, a.member_id, session=50)
        b = await b_task
        await asyncio.gather(gc.sync("g", 2, a.member_id, None, None, None, {}),
                             gc.sync("g", 2, b.member_id, None, None, None, {}))
        top, errors = gc.leave("g", [(b.member_id, None), ("ghost", None)])
        assert top == ErrorCode.none and errors == [ErrorCode.none, ErrorCode.unknown_member_id]
        assert gc.describe("g").state == "PreparingRebalance"
        a3 = await join(gc, a.member_id, session=50)
        assert a3.generation == 3 and len(a3.members) == 1
        deadline = asyncio.get_running_loop().time() + 10  # no heartbeat: the session expires, the group empties
        while gc.describe("g").state != "Empty" and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)
        assert gc.describe("g").state == "Empty" and gc.describe("g").members == []
        gc.close()
    run(body())


def test_protocol_checks():
    async def body():
        gc, _ = make()
        a = await join_new(gc)
        other = await gc.join("g", "", None, "c", "h", 1000, 1000, "connect", PROTOCOLS, True)
        assert other.error == ErrorCode.inconsistent_group_protocol
        other = await join(gc, protocols=[("roundrobin", b"")])
        assert other.error == ErrorCode.inconsistent_group_protocol
        bad = await gc.join("g", "", None, "c", "h", 5, 1000, "consumer", PROTOCOLS, True)
        assert bad.error == ErrorCode.invalid_session_timeout
        assert (await gc.sync("g", 1, a.member_id, None, "consumer", "roundrobin", {})).error == \
            ErrorCode.inconsistent_group_protocol
        assert (await join(gc, "stranger")).error == ErrorCode.unknown_member_id
        gc.close()
    run(body())


def test_static_member_rejoin_in_stable_causes_no_rebalance():
    async def body():
        gc, _ = make()
        a = await join(gc, instance="i1")  # static members skip MEMBER_ID_REQUIRED
        assert a.error == ErrorCode.none and a.member_id.startswith("i1-")
        await gc.sync("g", 1, a.member_id, "i1", None, None, {a.member_id: b"A"})
        again = await join(gc, instance="i1")
        assert again.error == ErrorCode.none and again.generation == 1 and again.member_id != a.member_id
        assert again.skip_assignment  # the leader: members listed, no new assignment needed
        assert gc.describe("g").state == "Stable"
        assert gc.heartbeat("g", a.member_id, "i1", 1) == ErrorCode.fenced_instance_id
        synced = await gc.sync("g", 1, again.member_id, "i1", None, None, {})
        assert synced.assignment == b"A"
        old_client = await gc.join("g", "", "i1", "c", "h", 1000, 1000, "consumer", PROTOCOLS, True,
                                   supports_skip_assignment=False)  # JoinGroup < v9
        assert old_client.error == ErrorCode.none and old_client.leader == again.member_id  # the old leader id
        assert old_client.members == [] and not old_client.skip_assignment
        assert gc.describe("g").state == "Stable"
        gc.close()
    run(body())


def test_offsets_simple_consumer_and_member_checks():
    async def body():
        gc, log = make()
        res = await gc.commit_offsets("simple", "", None, -1, {("t", 0): OffsetRequest(5, 2, "m")})
        assert res == {("t", 0): ErrorCode.none}
        got = gc.fetch_offsets("simple", [("t", 0), ("t", 1)])
        assert got[("t", 0)].offset == 5 and got[("t", 0)].leader_epoch == 2 and got[("t", 1)] is None
        assert (await gc.commit_offsets("nogroup", "m", None, 3, {("t", 0): OffsetRequest(1)})) == \
            {("t", 0): ErrorCode.illegal_generation}
        big = await gc.commit_offsets("simple", "", None, -1, {("t", 0): OffsetRequest(1, -1, "x" * 5000)})
        assert big == {("t", 0): ErrorCode.offset_metadata_too_large}
        a = await join_new(gc)
        assert (await gc.commit_offsets("g", a.member_id, None, 1, {("t", 0): OffsetRequest(9)}))[("t", 0)] == \
            ErrorCode.rebalance_in_progress  # CompletingRebalance until the leader syncs
        await gc.sync("g", 1, a.member_id, None, None, None, {})
        assert (await gc.commit_offsets("g", a.member_id, None, 1, {("t", 0): OffsetRequest(9)}))[("t", 0)] == \
            ErrorCode.none
        assert (await gc.commit_offsets("g", a.member_id, None, 0, {("t", 0): OffsetRequest(9)}))[("t", 0)] == \
            ErrorCode.illegal_generation
        assert (await gc.commit_offsets("g", "x", None, 1, {("t", 0): OffsetRequest(9)}))[("t", 0)] == \
            ErrorCode.unknown_member_id
        log.fail = ErrorCode.not_enough_replicas
        assert (await gc.commit_offsets("g", a.member_id, None, 1, {("t", 0): OffsetRequest(10)}))[("t", 0)] == \
            ErrorCode.coordinator_not_available
        assert gc.fetch_offsets("g", None)[("t", 0)].offset == 9
        gc.close()
    run(body())


def test_replay_restores_groups_and_offsets():
    async def body():
        gc, log = make()
        a = await join_new(gc)
        await gc.sync("g", 1, a.member_id, None, None, None, {a.member_id: b"A"})
        await gc.commit_offsets("g", a.member_id, None, 1, {("t", 0): OffsetRequest(11, 1, "x")})
        await gc.commit_offsets("s", "", None, -1, {("t", 1): OffsetRequest(3)})
        assert (await gc.delete_groups(["s"])) == {"s": ErrorCode.none}
        gc.close()
        fresh, _ = make()
        for key, value in log.records:
            fresh.replay(key, value)
        fresh.loaded(list(fresh.groups))
        assert set(fresh.groups) == {"g"}
        d = fresh.describe("g")
        assert d.state == "Stable" and d.members[0][0] == a.member_id and d.members[0][5] == b"A"
        assert fresh.fetch_offsets("g", [("t", 0)])[("t", 0)].offset == 11
        assert fresh.heartbeat("g", a.member_id, None, 1) == ErrorCode.none
        fresh.close()
    run(body())


def test_admin_delete_and_offset_delete():
    async def body():
        gc, _ = make()
        a = await join_new(gc)
        await gc.sync("g", 1, a.member_id, None, None, None, {})
        await gc.commit_offsets("g", a.member_id, None, 1, {("t", 0): OffsetRequest(1), ("u", 0): OffsetRequest(2)})
        assert (await gc.delete_groups(["g", "nope"])) == {"g": ErrorCode.non_empty_group,
                                                          "nope": ErrorCode.group_id_not_found}
        top, per = await gc.delete_offsets("g", [("t", 0), ("u", 0)])
        assert top == ErrorCode.none
        assert per == {("t", 0): ErrorCode.group_subscribed_to_topic, ("u", 0): ErrorCode.none}
        assert gc.list_groups({"stable"}) == [("g", "consumer", "Stable")]
        assert gc.list_groups({"Empty"}) == []
        gc.close()
    run(body())


def test_expiry_of_an_empty_groups_offsets():
    async def body():
        gc, log = make(offsets_retention_ms=1000)
        await gc.commit_offsets("s", "", None, -1, {("t", 0): OffsetRequest(1)})
        commit_ts = gc.groups["s"].offsets[("t", 0)].commit_timestamp
        assert await gc.expire_offsets(commit_ts + 500) == 0
        assert await gc.expire_offsets(commit_ts + 1000) == 1
        assert "s" not in gc.groups and log.records[-1][1] is None
        gc.close()
    run(body())


@pytest.mark.parametrize("delay", [50])
def test_initial_rebalance_delay_gathers_joiners(delay):
    async def body():
        gc, _ = make()
        gc.config = type(gc.config)(min_session_timeout_ms=10, initial_rebalance_delay_ms=delay)
        first = asyncio.create_task(join_new(gc))
        second = asyncio.create_task(join_new(gc))
        a, b = await asyncio.gather(first, second)
        assert a.generation == b.generation == 1  # one rebalance for both
        gc.close()
    run(body())


def test_a_pending_member_completing_the_join_phase_gets_its_answer():
    async def body():
        gc, _ = make()
        a = await join_new(gc)
        await gc.sync("g", 1, a.member_id, None, None, None, {})
        pending = await join(gc)  # KIP-394: an id handed out; the join phase waits for it
        assert pending.error == ErrorCode.member_id_required
        a_rejoin = asyncio.create_task(join(gc, a.member_id, protocols=[("range", b"changed")]))
        await asyncio.sleep(0.01)
        assert gc.describe("g").state == "PreparingRebalance" and not a_rejoin.done()
        b = await join(gc, pending.member_id)  # the last one: completes the phase at once
        assert b.error == ErrorCode.none and b.generation == 2
        assert (await a_rejoin).generation == 2
        gc.close()
    run(body())


def test_a_deleted_topics_offsets_go_with_tombstones():
    async def body():
        gc, log = make()
        await gc.commit_offsets("s", "", None, -1, {("t", 0): OffsetRequest(1), ("u", 0): OffsetRequest(2)})
        assert await gc.remove_topic_offsets("t") == 1
        assert set(gc.fetch_offsets("s", None)) == {("u", 0)}
        assert log.records[-1][1] is None and decode_key(log.records[-1][0]).topic == "t"
        gc.close()
    run(body())


def test_the_initial_delay_is_extended_only_in_the_first_generation():
    """Kafka's addMemberAndRebalance marks newMemberAdded only while PreparingRebalance at generation
    0: a group back to Empty after a generation gets one initial delay, never extended."""
    async def body():
        gc, _ = make()
        a = await join_new(gc)
        assert a.generation == 1
        gc.leave("g", [(a.member_id, None)])
        while gc.describe("g").state != "Empty":  # the join phase of no member ends on the next turn
            await asyncio.sleep(0.001)
        gc.config = type(gc.config)(min_session_timeout_ms=10, initial_rebalance_delay_ms=60_000)
        first = asyncio.create_task(join_new(gc, rebalance=600_000))
        second = asyncio.create_task(join_new(gc, rebalance=600_000))
        while len(gc.groups["g"].members) < 2:
            await asyncio.sleep(0.001)
        assert gc.describe("g").state == "PreparingRebalance"
        assert not gc.groups["g"].new_member_added
        first.cancel(), second.cancel()
        gc.close()
    run(body())


def test_a_joiner_during_the_first_initial_delay_extends_it():
    async def body():
        gc, _ = make()
        gc.config = type(gc.config)(min_session_timeout_ms=10, initial_rebalance_delay_ms=60_000)
        first = asyncio.create_task(join_new(gc, rebalance=600_000))
        second = asyncio.create_task(join_new(gc, rebalance=600_000))
        while len(gc.groups.get("g").members if "g" in gc.groups else ()) < 2:
            await asyncio.sleep(0.001)
        assert gc.groups["g"].new_member_added
        first.cancel(), second.cancel()
        gc.close()
    run(body())


def test_a_commit_during_completing_rebalance_checks_member_and_generation_first():
    """Kafka's validateOffsetCommit before the group's state: in CompletingRebalance a member still
    on the previous generation gets ILLEGAL_GENERATION, an unknown one UNKNOWN_MEMBER_ID, and only
    one with the new generation REBALANCE_IN_PROGRESS (librdkafka's 0113 v_commit_during_rebalance
    accepts ILLEGAL_GENERATION from a manual commit made while a consumer joins)."""
    async def body():
        gc, _ = make()
        a = await join_new(gc)
        await gc.sync("g", 1, a.member_id, None, None, None, {a.member_id: b"all"})
        b_task = asyncio.create_task(join_new(gc))
        await asyncio.sleep(0.01)
        await join(gc, a.member_id)
        b = await b_task  # generation 2, CompletingRebalance until the leader syncs
        commit = {("t", 0): OffsetRequest(3)}
        assert (await gc.commit_offsets("g", a.member_id, None, 1, commit))[("t", 0)] == ErrorCode.illegal_generation
        assert (await gc.commit_offsets("g", "nobody", None, 2, commit))[("t", 0)] == ErrorCode.unknown_member_id
        assert (await gc.commit_offsets("g", b.member_id, "gone", 2, commit))[("t", 0)] == ErrorCode.unknown_member_id
        assert (await gc.commit_offsets("g", a.member_id, None, 2, commit))[("t", 0)] == \
            ErrorCode.rebalance_in_progress
        gc.close()
    run(body())


def test_a_transactional_commit_is_checked_as_kafkas_validate_offset_commit():
    """handleTxnCommitOffsets adds an unknown group Empty, then validateOffsetCommit(isTransactional)."""
    async def body():
        gc, log = make(offsets_retention_ms=1000)
        one = {("t", 0): OffsetRequest(4)}
        # v3 with a member and a generation, to a group nobody joined: the member is unknown
        assert await gc.txn_commit_offsets("new", 7, 0, "m", None, 3, one) == {("t", 0): ErrorCode.unknown_member_id}
        assert gc.groups["new"].state.name == "EMPTY"  # added, as Kafka adds it
        a = await join_new(gc)
        await gc.sync("g", 1, a.member_id, None, None, None, {})
        # v0-v2 (no member, no generation) to a non-empty group: allowed, unlike OffsetCommit
        assert await gc.txn_commit_offsets("g", 7, 0, "", None, -1, one) == {("t", 0): ErrorCode.none}
        assert await gc.commit_offsets("g", "", None, -1, one) == {("t", 0): ErrorCode.unknown_member_id}
        # a static instance the group does not know, and one mapped to another member
        assert await gc.txn_commit_offsets("g", 7, 0, a.member_id, "i-1", 1, one) == \
            {("t", 0): ErrorCode.unknown_member_id}
        b = await join(gc, group="s", instance="i-2")  # a static member gets its id at once
        assert await gc.txn_commit_offsets("s", 7, 0, "other", "i-2", b.generation, one) == \
            {("t", 0): ErrorCode.fenced_instance_id}
        assert await gc.txn_commit_offsets("g", 7, 0, a.member_id, None, 0, one) == \
            {("t", 0): ErrorCode.illegal_generation}
        # an Empty group whose only offsets wait for their transaction's marker is kept
        assert await gc.txn_commit_offsets("pending", 8, 0, "", None, -1, one) == {("t", 0): ErrorCode.none}
        assert await gc.expire_offsets() == 0 and "pending" in gc.groups
        gc.close()
    run(body())


def test_a_plain_commit_being_appended_is_unstable_for_a_require_stable_fetch():
    """GroupMetadata.pendingOffsetCommits: from the commit's append until its answer."""
    async def body():
        gc, log = make()
        release = asyncio.Event()
        write = log.write_records

        async def held(group_id, records):
            await release.wait()
            return await write(group_id, records)
        log.write_records = held
        first = asyncio.create_task(gc.commit_offsets("s", "", None, -1, {("t", 0): OffsetRequest(3)}))
        await asyncio.sleep(0)
        assert gc.unstable_partitions("s") == {("t", 0)}
        assert gc.unstable_partitions("other") == set()
        release.set()
        assert await first == {("t", 0): ErrorCode.none}
        assert gc.unstable_partitions("s") == set() and gc.groups["s"].committing == {}
        log.fail = ErrorCode.not_enough_replicas  # a failed append leaves nothing pending either
        assert (await gc.commit_offsets("s", "", None, -1, {("t", 0): OffsetRequest(4)}))[("t", 0)] != ErrorCode.none
        assert gc.unstable_partitions("s") == set()
        gc.close()
    run(body())
