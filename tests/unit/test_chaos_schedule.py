"""The chaos schedule is a pure function of its seed and keeps the min.insync.replicas limit."""

import pytest

from fauxka.chaos.schedule import DOWN, NEMESES, ScheduleError, most_down_at_once, parse_nemeses, plan


def _plan(seed, **kw):
    args = dict(duration_s=300, nemeses=NEMESES, brokers=[1, 2, 3], replication_factor=3, min_insync=2, partitions=6)
    return plan(seed, **{**args, **kw})


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another():
    assert _plan(7) == _plan(7)
    assert _plan(7) != _plan(8)
    assert len(_plan(7)) > 10


def test_never_more_brokers_down_than_min_insync_allows():
    for seed in range(50):
        steps = _plan(seed)
        assert most_down_at_once(steps) <= 1
        assert all(s.end_s <= 300 for s in steps)
        down = sorted((s.start_s, s.end_s) for s in steps if s.nemesis in DOWN)
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(down, down[1:]))


def test_five_brokers_with_min_insync_one_may_lose_two_at_once_on_distinct_brokers():
    steps = _plan(3, brokers=[1, 2, 3, 4, 5], min_insync=1, nemeses=("kill", "pause"), mean_fault_s=20)
    assert most_down_at_once(steps) == 2
    for a in steps:
        overlapping = [b for b in steps if b is not a and b.start_s < a.end_s and a.start_s < b.end_s]
        assert all(b.broker != a.broker for b in overlapping)


def test_every_nemesis_appears_in_a_long_schedule():
    assert {s.nemesis for s in _plan(1, duration_s=900)} == set(NEMESES)
    assert all(s.peer not in (None, s.broker) for s in _plan(1) if s.nemesis == "link")


def test_more_down_than_the_cluster_survives_is_refused():
    with pytest.raises(ScheduleError, match="at most 1 may be out at once"):
        _plan(1, max_down=2)
    with pytest.raises(ScheduleError, match="none may be out"):
        _plan(1, brokers=[1], replication_factor=1, min_insync=1)
    assert [s.nemesis for s in _plan(1, brokers=[1, 2], replication_factor=2, min_insync=2,
                                     nemeses=("leader", "coordinator"))]


def test_nemesis_names():
    assert parse_nemeses("kill, pause,kill") == ("kill", "pause")
    assert parse_nemeses(None) == NEMESES
    with pytest.raises(ScheduleError, match="unknown nemesis boom; one of: kill"):
        parse_nemeses("kill,boom")
