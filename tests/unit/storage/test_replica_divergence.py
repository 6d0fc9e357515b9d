"""Two replicas' logs through a leader change, as Kafka's follower truncation by leader epoch
(KIP-101/KIP-279) drives them: the old leader's unreplicated tail is cut at the new leader's
end offset for its last epoch, then it fetches on."""

from tests.unit.storage.helpers import now_ms, records_of, v2


def replicate(leader, follower):
    while follower.log_end_offset < leader.log_end_offset:
        data = leader.read(follower.log_end_offset, 1500, leader.log_end_offset, True)
        follower.append_as_follower(data)


def test_old_leader_truncates_to_the_new_leaders_epoch_end(make_log):
    a, b = make_log(name="a-0"), make_log(name="b-0")
    for _ in range(5):
        a.append_as_leader(v2(2, values=[b"a"] * 2), 1, now_ms())
    replicate(a, b)
    a.append_as_leader(v2(3, values=[b"lost"] * 3), 1, now_ms())  # never replicated
    b.assign_epoch(2, b.log_end_offset)  # b becomes leader at epoch 2
    b.append_as_leader(v2(4, values=[b"b"] * 4), 2, now_ms())

    epoch, end = b.end_offset_for_epoch(a.latest_epoch())
    assert (epoch, end) == (1, 10)
    a.truncate_to(end)
    assert a.log_end_offset == 10
    replicate(b, a)
    assert a.read(0, 10**6, 100, True) == b.read(0, 10**6, 100, True)
    assert [r[3] for r in records_of(a.read(10, 10**6, 100, True))] == [b"b"] * 4
    assert a.epochs.entries() == b.epochs.entries() == [(1, 0), (2, 10)]


def test_follower_behind_the_leaders_log_start_starts_over(make_log):
    leader, follower = make_log(name="l-0"), make_log(name="f-0")
    for _ in range(4):
        leader.append_as_leader(v2(2), 3, now_ms())
    leader.high_watermark = 8
    leader.roll(now_ms())
    leader.advance_log_start_offset(8)
    leader.append_as_leader(v2(2), 3, now_ms())
    follower.truncate_fully_and_start_at(leader.log_start_offset)
    replicate(leader, follower)
    assert (follower.log_start_offset, follower.log_end_offset) == (8, 10)
    assert follower.end_offset_for_epoch(3) == (3, 10)


def test_a_leader_that_appended_nothing_forgets_its_epoch_when_told_to_truncate_at_its_end(make_log):
    """a leads at epoch 1 (the epoch starts at its log end) and appends nothing; b leads at epoch 2.
    The leader answers a's fetch (last epoch 1) with a diverging epoch (0, 10); truncating to 10,
    its own log end, must still drop the epoch-1 entry (Kafka's truncateTo), else every fetch
    diverges again and a never replicates what b appends."""
    a, b = make_log(name="a-0"), make_log(name="b-0")
    for _ in range(5):
        a.append_as_leader(v2(2, values=[b"a"] * 2), 0, now_ms())
    replicate(a, b)
    a.assign_epoch(1, a.log_end_offset)  # a becomes leader at epoch 1, then loses it
    b.assign_epoch(2, b.log_end_offset)
    b.append_as_leader(v2(3, values=[b"b"] * 3), 2, now_ms())
    assert b.end_offset_for_epoch(a.latest_epoch()) == (0, 10)
    a.truncate_to(10)
    assert a.log_end_offset == 10 and a.epochs.entries() == [(0, 0)]
    epoch, end = b.end_offset_for_epoch(a.latest_epoch())
    assert (epoch, end) == (0, 10) and epoch == a.latest_epoch()  # no divergence now: a fetches on
    replicate(b, a)
    assert a.epochs.entries() == b.epochs.entries() == [(0, 0), (2, 10)]
