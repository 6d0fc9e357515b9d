"""KIP-227 fetch sessions: the cache's rules without sockets."""

from fauxka.broker.replication.fetch_sessions import FetchSessionCache, SessionPartition
from fauxka.model.errors import ErrorCode


def test_sessionless_and_new_sessions():
    cache = FetchSessionCache(2)
    assert cache.begin(0, -1) == (ErrorCode.none, None, True)
    assert cache.begin(0, 5)[0] == ErrorCode.invalid_fetch_session_epoch
    error, session, full = cache.begin(0, 0)
    assert error == ErrorCode.none and full and session.id > 0 and len(cache) == 1


def test_epochs_must_follow_each_answer():
    cache = FetchSessionCache(2)
    _, session, _ = cache.begin(0, 0)
    cache.advance(session)
    assert cache.begin(session.id, 2)[0] == ErrorCode.invalid_fetch_session_epoch
    error, same, full = cache.begin(session.id, 1)
    assert (error, same, full) == (ErrorCode.none, session, False)
    assert cache.begin(session.id + 1, 1)[0] == ErrorCode.fetch_session_id_not_found


def test_an_incremental_fetch_moves_the_session_on_when_taken():
    """Kafka's FetchManager.newContext: the next epoch is the one after a fetch taken, answered or
    not, and a fetch answered after a later one was taken is superseded."""
    cache = FetchSessionCache(2)
    _, session, _ = cache.begin(0, 0)
    cache.advance(session)  # the full fetch answered: epoch 1 next
    assert cache.begin(session.id, 1)[0] == ErrorCode.none  # taken, still waiting at the leader
    taken_at = session.epoch
    assert taken_at == 2 and not cache.superseded(session, taken_at)
    assert cache.begin(session.id, 1)[0] == ErrorCode.invalid_fetch_session_epoch
    assert cache.begin(session.id, 2)[0] == ErrorCode.none  # the follower left the first one
    assert cache.superseded(session, taken_at)


def test_closing_a_session_makes_the_fetch_sessionless():
    cache = FetchSessionCache(2)
    _, session, _ = cache.begin(0, 0)
    assert cache.begin(session.id, -1) == (ErrorCode.none, None, True)
    assert cache.begin(session.id, 1)[0] == ErrorCode.fetch_session_id_not_found


def test_the_least_recently_used_session_is_evicted():
    cache = FetchSessionCache(2)
    first, second = cache.begin(0, 0)[1], cache.begin(0, 0)[1]
    cache.advance(first)
    cache.begin(first.id, 1)  # used: second is now the oldest
    cache.begin(0, 0)
    assert cache.begin(second.id, 1)[0] == ErrorCode.fetch_session_id_not_found
    assert cache.begin(first.id, 2)[0] == ErrorCode.none


def test_incremental_updates_and_what_an_answer_includes():
    cache = FetchSessionCache(2)
    _, session, _ = cache.begin(0, 0)
    cache.update(session, {("t", 0): SessionPartition(0, 100), ("t", 1): SessionPartition(5, 100)}, [])
    part = session.partitions[("t", 0)]
    assert cache.changed(part, ErrorCode.none, b"", (0, 0, 0))  # never sent: included
    assert not cache.changed(part, ErrorCode.none, b"", (0, 0, 0))  # nothing new
    assert cache.changed(part, ErrorCode.none, b"", (3, 3, 0))  # the high watermark moved
    assert cache.changed(part, ErrorCode.none, b"rec", (3, 3, 0))  # records
    assert cache.changed(part, ErrorCode.not_leader_or_follower, b"", (3, 3, 0))  # errors always
    cache.update(session, {("t", 0): SessionPartition(7, 100)}, [("t", 1)])
    assert list(session.partitions) == [("t", 0)] and session.partitions[("t", 0)].fetch_offset == 7
    assert session.partitions[("t", 0)].sent == (3, 3, 0)  # what the client was told stays known


def test_a_discarded_session_is_gone():
    cache = FetchSessionCache(10)
    error, session, full = cache.begin(0, 0)
    assert session is not None and full and len(cache) == 1
    cache.discard(session)
    assert len(cache) == 0
    assert cache.begin(session.id, 1)[0] == ErrorCode.fetch_session_id_not_found


def test_a_sessions_partitions_can_be_looked_at_without_using_it():
    cache = FetchSessionCache(2)
    first, second = cache.begin(0, 0)[1], cache.begin(0, 0)[1]
    cache.update(first, {("t", 0): SessionPartition(5, 1000), ("u", 1): SessionPartition(0, 1000)}, [])
    assert cache.partitions_of(first.id) == (("t", 0), ("u", 1))
    assert cache.partitions_of(0) == () and cache.partitions_of(second.id + 7) == ()
    cache.begin(0, 0)  # full: the least recently used goes, still `first` (looking did not use it)
    assert cache.partitions_of(first.id) == ()
