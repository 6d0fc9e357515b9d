"""The follower's side of an incremental fetch session (fauxka/broker/replication/fetcher.py, Kafka's
FetchSessionHandler): what each fetch carries, and when the session starts over."""

import asyncio
from types import SimpleNamespace

import structlog

from fauxka.broker.replication.fetcher import Fetcher
from fauxka.model.errors import ErrorCode


class Log:
    def __init__(self, end):
        self.log_end_offset, self.log_start_offset = end, 0

    def latest_epoch(self):
        return 0


def make(failed_logs=lambda keys: ()):
    config = {"replica.fetch.backoff.ms": 1000, "replica.fetch.wait.max.ms": 500, "replica.fetch.min.bytes": 1,
              "replica.fetch.max.bytes": 1 << 20, "replica.fetch.response.max.bytes": 10 << 20,
              "replica.socket.timeout.ms": 30000}
    partitions = {("t", i): SimpleNamespace(leader_id=1, leader_epoch=0, log=Log(0)) for i in range(3)}
    hosted = SimpleNamespace(partitions=partitions, broker_id=2)
    fetcher = Fetcher(hosted, None, config, 1, None, failed_logs)
    fetcher.keys.update(partitions)
    return fetcher, partitions


def sent(request):
    return {(topic, p[0]): p[2] for topic, partitions in request.topics.items() for p in partitions}


def answer(error=ErrorCode.none, session_id=7, failed=()):
    responses = [SimpleNamespace(topic=t, partitions=[SimpleNamespace(partition_index=i, error_code=code)])
                 for t, i, code in failed]
    return SimpleNamespace(error_code=error, session_id=session_id, responses=responses)


def test_full_then_only_the_changed_partitions_then_forgotten_ones():
    fetcher, partitions = make()
    full = fetcher._request()
    assert (full.session_id, full.session_epoch) == (0, 0) and len(sent(full)) == 3
    fetcher._session_answered(answer())
    idle = fetcher._request()
    assert (idle.session_id, idle.session_epoch) == (7, 1) and sent(idle) == {} and not idle.forgotten
    fetcher._session_answered(answer())
    partitions[("t", 1)].log.log_end_offset = 5  # the follower appended: its fetch offset moved
    fetcher.keys.discard(("t", 2))  # no longer followed from this leader
    changed = fetcher._request()
    assert changed.session_epoch == 2 and sent(changed) == {("t", 1): 5}
    assert changed.forgotten == {"t": [2]}
    fetcher._session_answered(answer())
    assert sent(fetcher._request()) == {} and fetcher._in_session.keys() == {("t", 0), ("t", 1)}


def test_a_session_error_or_no_session_means_a_full_fetch_next():
    fetcher, _ = make()
    fetcher._request()
    fetcher._session_answered(answer())
    fetcher._request()
    fetcher._reset_session()  # what run() does on FETCH_SESSION_ID_NOT_FOUND / INVALID_FETCH_SESSION_EPOCH
    again = fetcher._request()
    assert (again.session_id, again.session_epoch) == (0, 0) and len(sent(again)) == 3
    fetcher._session_answered(answer(session_id=0))  # the leader keeps no sessions
    still = fetcher._request()
    assert (still.session_id, still.session_epoch) == (0, 0) and len(sent(still)) == 3
    fetcher._session_answered(answer(error=ErrorCode.unknown_server_error))
    assert fetcher._session_id == 0


def test_a_partition_answered_with_an_error_is_named_again():
    fetcher, _ = make()
    fetcher._request()
    fetcher._session_answered(answer(failed=[("t", 1, ErrorCode.unknown_topic_or_partition)]))
    assert sent(fetcher._request()) == {("t", 1): 0}  # the leader refused it: not in its session
    fetcher._session_answered(answer(failed=[("t", 1, ErrorCode.not_leader_or_follower)]))
    assert sent(fetcher._request()) == {("t", 1): 0}
    fetcher._session_answered(answer())
    assert sent(fetcher._request()) == {}  # taken: nothing changed since


def test_a_partition_answered_with_an_error_and_then_no_longer_followed_is_forgotten():
    """The leader's session keeps a partition it answered with an error (FENCED_LEADER_EPOCH); once
    the follower follows it from elsewhere, only a forget stops the leader answering it at once."""
    fetcher, _ = make()
    fetcher._request()
    fetcher._session_answered(answer())
    fetcher._request()
    fetcher._session_answered(answer(failed=[("t", 1, ErrorCode.fenced_leader_epoch)]))
    fetcher.keys.discard(("t", 1))  # the follower learnt another leader for it
    moved = fetcher._request()
    assert sent(moved) == {}
    assert moved.forgotten == {"t": [1]}


def test_a_partition_whose_log_failed_here_is_left_out_until_the_fault_goes():
    failed = {("t", 1)}  # a `storage` fault on this broker: Kafka removes the fetcher of a failed log
    fetcher, _ = make(lambda keys: failed & set(keys))
    full = fetcher._request()
    assert sent(full) == {("t", 0): 0, ("t", 2): 0}
    fetcher._session_answered(answer())
    failed.add(("t", 2))  # while the session is open: the leader is told to forget it
    assert fetcher._request().forgotten == {"t": [2]}
    fetcher._session_answered(answer())
    failed.clear()  # the log is back: fetched again
    assert sent(fetcher._request()) == {("t", 1): 0, ("t", 2): 0}
    failed.update({("t", 0), ("t", 1), ("t", 2)})
    fetcher._reset_session()
    assert fetcher._request() is None  # nothing to fetch from this leader


class _HeldChannel:
    """A connection whose fetches the leader holds until the test answers them."""

    def __init__(self):
        self.sent: list = []
        self.waiting: list = []
        self.closed = False

    async def send_encoded(self, encode, request_cls, timeout):
        import asyncio
        answer = asyncio.get_running_loop().create_future()
        self.sent.append(encode.__self__)
        self.waiting.append(answer)
        return await answer

    def abort(self, error):
        self.closed = True
        for answer in self.waiting:
            if not answer.done():
                answer.set_exception(error)

    async def close(self):
        self.closed = True


def test_a_partition_given_while_a_fetch_waits_at_the_leader_is_fetched_at_once():
    """Kafka's fetcher takes a new partition into its next fetch, after the one the leader holds
    up to replica.fetch.wait.max.ms: a new topic's first acks=all record waited 500 ms. The
    waiting fetch is left (its connection aborted) and the session's next fetch, the epoch after
    it (the leader moved the session on when it took the one left), names the new partition."""
    import asyncio

    async def scenario():
        fetcher, partitions = make()
        channel = _HeldChannel()
        connects = []

        class Connector:
            async def connect(self, leader, timeout_s, client_id):
                connects.append(leader)
                return channel if len(connects) == 1 else _HeldChannel()

        fetcher._connector = Connector()
        fetcher._log = structlog.get_logger()
        fetcher._request()
        fetcher._session_answered(answer())  # session 7 holds t-0..2, next epoch 1
        partitions[("t", 0)].log.log_end_offset = 3
        fetcher.task = asyncio.ensure_future(fetcher.run())
        for _ in range(10):  # the fetcher sends its fetch (epoch 1, t-0 moved); the leader holds it
            await asyncio.sleep(0)
        assert [(r.session_epoch, sent(r)) for r in channel.sent] == [(1, {("t", 0): 3})]
        fetcher.add(("t", 1))  # already followed: the held fetch stays
        assert not channel.closed
        partitions[("u", 0)] = SimpleNamespace(leader_id=1, leader_epoch=0, log=Log(0))
        fetcher.add(("u", 0))
        assert channel.closed
        for _ in range(10):
            await asyncio.sleep(0)
        following = fetcher._channel.sent
        assert len(connects) == 2 and [(r.session_id, r.session_epoch, sent(r)) for r in following] == [
            (7, 2, {("u", 0): 0})]  # t-0's move went with the fetch left behind
        fetcher.task.cancel()
        await asyncio.gather(fetcher.task, return_exceptions=True)

    asyncio.run(scenario())


def test_a_full_fetch_left_behind_starts_the_session_over():
    fetcher, partitions = make()
    fetcher._request()  # a full fetch in flight: the session it opens is known only from its answer
    asyncio.run(fetcher._abandon())
    again = fetcher._request()
    assert (again.session_id, again.session_epoch) == (0, 0) and len(sent(again)) == 3
