"""Idempotence across a leader change: a follower's producer state is built from the batches it
replicates (Kafka's UnifiedLog.appendAsFollower updates ProducerStateManager too), so once it
leads it answers a producer's retry of a batch it already has as a duplicate, at the original
offsets. Also after its log was truncated and fetched again, and after a restart."""

from fauxka.storage.config import LogConfig
from fauxka.storage.log import PartitionLog
from tests.unit.storage.helpers import now_ms, v2

PID = 7


def batch(seq, n=2, epoch=0):
    return v2(n, pid=PID, epoch=epoch, seq=seq, values=[f"s{seq + i}".encode() for i in range(n)])


def replicate(leader, follower):
    """The follower fetches everything past its end offset, as the replica fetcher does."""
    while follower.log_end_offset < leader.log_end_offset:
        data = leader.read(follower.log_end_offset, 1 << 20, leader.log_end_offset, True)
        follower.append_as_follower(data)
    follower.high_watermark = leader.log_end_offset


def test_a_follower_answers_a_retry_of_a_replicated_batch_as_a_duplicate(make_log):
    leader, follower = make_log(name="l-0"), make_log(name="f-0")
    sent = [batch(2 * i) for i in range(4)]
    infos = [leader.append_as_leader(b, 0, now_ms()) for b in sent]
    replicate(leader, follower)
    follower.assign_epoch(1, follower.log_end_offset)  # it becomes leader
    for b, info in zip(sent[-4:], infos[-4:]):
        again = follower.append_as_leader(b, 1, now_ms())
        assert again.duplicate and (again.first_offset, again.last_offset) == (info.first_offset, info.last_offset)
    assert follower.log_end_offset == 8
    assert not follower.append_as_leader(batch(8), 1, now_ms()).duplicate


def test_after_truncation_and_refetch_the_retry_is_still_a_duplicate(make_log):
    leader = make_log(LogConfig(segment_bytes=400), name="l-0")  # several segments: snapshots at rolls
    follower = make_log(LogConfig(segment_bytes=400), name="f-0")
    sent = [batch(2 * i) for i in range(8)]
    infos = [leader.append_as_leader(b, 0, now_ms()) for b in sent]
    replicate(leader, follower)
    assert len(follower.segments) > 1
    follower.truncate_to(infos[3].first_offset)  # KIP-101 truncation on becoming follower, then catching up
    assert follower.log_end_offset == infos[3].first_offset
    replicate(leader, follower)
    follower.assign_epoch(1, follower.log_end_offset)
    for b, info in zip(sent[-5:], infos[-5:]):
        again = follower.append_as_leader(b, 1, now_ms())
        assert again.duplicate and again.first_offset == info.first_offset
    assert follower.log_end_offset == leader.log_end_offset


def test_a_truncated_batch_fetched_again_from_a_new_leader_is_the_state(make_log):
    """The follower had a batch the new leader never got: truncated away, it is no duplicate."""
    follower = make_log(name="f-0")
    first = follower.append_as_leader(batch(0), 0, now_ms())
    follower.append_as_leader(batch(2), 0, now_ms())
    follower.truncate_to(first.last_offset + 1)
    assert follower.last_producer_state(PID) == (0, 1, first.last_offset)
    resent = follower.append_as_leader(batch(2), 1, now_ms())
    assert not resent.duplicate and resent.first_offset == first.last_offset + 1


def test_after_a_restart_the_retry_is_a_duplicate(tmp_path):
    config = LogConfig(segment_bytes=400)
    leader = PartitionLog.load("t", 0, config, None)
    follower = PartitionLog.load("t", 0, config, str(tmp_path / "t-0"))
    sent = [batch(2 * i) for i in range(8)]
    infos = [leader.append_as_leader(b, 0, now_ms()) for b in sent]
    replicate(leader, follower)
    follower.close()
    follower = PartitionLog.load("t", 0, config, str(tmp_path / "t-0"), recovery_point=follower.log_end_offset)
    follower.assign_epoch(1, follower.log_end_offset)
    for b, info in zip(sent[-5:], infos[-5:]):
        again = follower.append_as_leader(b, 1, now_ms())
        assert again.duplicate and again.first_offset == info.first_offset
