"""Partition's leader bookkeeping (high watermark, ISR candidates, epoch fencing): pure logic
over a stand-in for storage's PartitionLog (offsets and an epoch cache, no records)."""

from fauxka.broker.replication.partition import Partition
from fauxka.model.errors import ErrorCode


class EpochLog:
    """The part of storage.log.PartitionLog that Partition reads: offsets and the epoch cache."""

    def __init__(self, end: int = 0):
        self.log_end_offset = end
        self.log_start_offset = 0
        self.high_watermark = 0
        self.epochs: list[tuple[int, int]] = []  # (epoch, start offset)

    def latest_epoch(self):
        return self.epochs[-1][0] if self.epochs else None

    def assign_epoch(self, epoch, start):
        self.epochs.append((epoch, start))

    def end_offset_for_epoch(self, epoch):
        found = [(e, s) for e, s in self.epochs if e <= epoch]
        if not found:
            return -1, -1
        e = found[-1][0]
        later = [s for ee, s in self.epochs if ee > e]
        return e, later[0] if later else self.log_end_offset


def leader(isr=(1, 2, 3), end=10) -> Partition:
    p = Partition("t", 0, EpochLog(end), broker_id=1)
    p.become_leader(5, list(isr), [1, 2, 3], 7, now_ms=1000.0)
    return p


def test_a_new_leadership_starts_its_epoch_at_the_log_end():
    p = leader()
    assert p.log.epochs == [(5, 10)]
    assert p.is_leader and p.partition_epoch == 7


def test_the_same_epoch_again_is_not_a_new_leadership():
    p = leader()
    assert not p.become_leader(5, [1, 2], [1, 2, 3], 8, now_ms=2000.0)
    assert p.log.epochs == [(5, 10)] and p.isr == [1, 2]


def test_high_watermark_waits_for_every_in_sync_follower():
    p = leader()
    assert not p.maybe_advance_high_watermark()  # followers not heard from yet
    p.update_follower(2, 10, 2000.0)
    assert not p.maybe_advance_high_watermark()
    p.update_follower(3, 8, 2000.0)
    assert p.maybe_advance_high_watermark() and p.log.high_watermark == 8
    p.update_follower(3, 10, 2100.0)
    assert p.maybe_advance_high_watermark() and p.log.high_watermark == 10


def test_a_single_replica_isr_moves_the_high_watermark_to_the_end():
    p = leader(isr=(1,))
    assert p.maybe_advance_high_watermark() and p.log.high_watermark == 10


def test_the_high_watermark_never_goes_back():
    p = leader(isr=(1,))
    p.maybe_advance_high_watermark()
    p.isr = [1, 2]
    p.update_follower(2, 3, 2000.0)
    assert not p.maybe_advance_high_watermark() and p.log.high_watermark == 10


def test_epoch_fencing():
    p = leader()
    assert p.check_epoch(-1) is None and p.check_epoch(5) is None
    assert p.check_epoch(4) == ErrorCode.fenced_leader_epoch
    assert p.check_epoch(6) == ErrorCode.unknown_leader_epoch


def test_a_lagging_follower_is_a_shrink_candidate_after_the_lag_time():
    p = leader()
    p.update_follower(2, 10, 1500.0)  # caught up
    p.update_follower(3, 4, 1500.0)  # behind since the leadership began at 1000
    assert p.shrink_candidate(now_ms=5000.0, lag_max_ms=10000) is None
    assert p.shrink_candidate(now_ms=11500.0, lag_max_ms=10000) == [1, 2]


def test_a_follower_at_the_leaders_end_stays_in_sync_however_long_it_is_silent():
    p = leader()  # log end offset 10
    p.update_follower(2, 10, 1500.0)
    p.update_follower(3, 10, 1500.0)
    assert p.shrink_candidate(now_ms=1e9, lag_max_ms=10000) is None  # idle partition: nothing to fetch
    p.log.log_end_offset = 11  # an append they have not fetched
    assert p.shrink_candidate(now_ms=1e9, lag_max_ms=10000) == [1]


def test_a_follower_that_reached_the_end_it_saw_last_time_counts_as_caught_up():
    p = leader()
    p.update_follower(3, 10, 2000.0)
    p.log.log_end_offset = 20  # more appends
    p.update_follower(3, 10, 9000.0)  # reached what the leader had at its previous fetch
    assert p.followers[3].last_caught_up_ms == 2000.0
    p.update_follower(3, 20, 9500.0)
    assert p.followers[3].last_caught_up_ms == 9500.0


def test_a_follower_rejoins_once_at_the_high_watermark_and_in_this_epoch():
    p = leader(isr=(1, 2))
    p.update_follower(2, 10, 1500.0)
    p.maybe_advance_high_watermark()
    p.update_follower(3, 9, 1600.0)
    assert p.expansion_candidate(3) is None
    p.update_follower(3, 10, 1700.0)
    assert p.expansion_candidate(3) == [1, 2, 3]
    p.pending_isr = [1, 2]  # a shrink in flight
    assert p.expansion_candidate(3) is None


def test_a_follower_ignores_leader_bookkeeping():
    p = Partition("t", 0, EpochLog(10), broker_id=2)
    assert p.become_follower(1, 5, [1, 2], [1, 2], 3)
    assert not p.become_follower(1, 5, [1], [1, 2], 4)
    assert not p.maybe_advance_high_watermark()
    assert p.shrink_candidate(1e12, 1) is None and p.expansion_candidate(3) is None


def test_the_low_watermark_is_the_smallest_live_log_start():
    p = leader()
    p.log.log_start_offset = 6
    p.update_follower(2, 10, 2000.0, log_start_offset=4)
    p.update_follower(3, 10, 2000.0, log_start_offset=0)
    assert p.low_watermark({1, 2, 3}) == 0
    assert p.low_watermark({1, 2}) == 4  # broker 3 is not alive: it does not hold DeleteRecords back


def test_an_expansion_in_flight_holds_the_high_watermark_for_the_replica_it_adds():
    """Kafka's maximal ISR: once the controller has written the expansion, the added replica may be
    elected leader, so nothing it lacks may be acknowledged before the answer is applied."""
    p = leader(isr=(1, 2))
    p.update_follower(2, 10, 1500.0)
    p.update_follower(3, 10, 1500.0)
    p.maybe_advance_high_watermark()
    p.pending_isr = p.expansion_candidate(3)
    assert p.pending_isr == [1, 2, 3] and p.maximal_isr == [1, 2, 3]
    p.log.log_end_offset = 14  # appended; follower 2 fetches it, the joining 3 not yet
    p.update_follower(2, 14, 1600.0)
    assert not p.maybe_advance_high_watermark() and p.log.high_watermark == 10
    p.update_follower(3, 12, 1650.0)
    assert p.maybe_advance_high_watermark() and p.log.high_watermark == 12


def test_a_shrink_in_flight_keeps_waiting_for_the_replica_it_drops():
    p = leader()
    p.update_follower(2, 10, 1500.0)
    p.update_follower(3, 4, 1500.0)
    p.pending_isr = [1, 2]
    assert p.maximal_isr == [1, 2, 3]
    p.maybe_advance_high_watermark()
    assert p.log.high_watermark == 4
