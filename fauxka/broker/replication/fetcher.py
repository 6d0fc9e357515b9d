"""Followers fetch from their leaders: one task per source broker (Kafka's ReplicaFetcherThread).

Each task sends Fetch v12 (replica_id = this broker) for every partition it follows from that
leader, over the inter-broker listener (broker.inter_broker: SASL included), and appends what
comes back with the leader's offsets. As Kafka's FetchSessionHandler does, the fetches run in an
incremental fetch session (KIP-227): a full fetch opens it, later fetches carry only the
partitions whose fetch state changed (and the ones to forget), and the leader answers only the
partitions with news; a session error, a failed fetch or a new connection starts over with a full
fetch. Unlike Kafka's fetcher, a partition given to it while its fetch waits at the leader (up to
replica.fetch.wait.max.ms) does not wait for that fetch: it is left, and the session's next fetch
goes on a new connection (a new topic's first acks=all record waited 500 ms for its followers).
The fetch carries the last fetched epoch, so a leader whose history diverges answers with the
diverging epoch and the follower truncates before fetching on (KIP-595-style truncation, Kafka 2.7+). OFFSET_OUT_OF_RANGE is handled as
ReplicaFetcherThread.handleOutOfRangeError: behind the leader's log start, start over there;
ahead of the leader, truncate. Errors back off replica.fetch.backoff.ms. A partition whose log
here has failed (a `storage` fault) is left out of the fetches while it lasts, as Kafka's
ReplicaManager.handleLogDirFailure removes its fetchers: the leader stops hearing from this replica.
"""

import asyncio
from typing import Any, Callable, Collection, Iterable

from fauxka.model.errors import ErrorCode, KafkaError

from ..inter_broker import InterBrokerConnectError, InterBrokerConnector
from ..protocol.codec import RequestParseError
from ..protocol.replica_fetch import REQUEST_CLASS, ReplicaFetch
from .hosted import HostedPartitions

_SESSION_ERRORS = (int(ErrorCode.fetch_session_id_not_found), int(ErrorCode.invalid_fetch_session_epoch))
CLIENT_ID_PREFIX = "fauxka-replica-fetcher-"
# those of the (topic, partition)s given whose log on this broker has failed (not fetched)
FailedLogs = Callable[[Iterable[tuple[str, int]]], Collection[tuple[str, int]]]


class _FetchLeft(Exception):
    """The fetch in flight was left for a partition it does not name (Fetcher.add)."""


class FetcherManager:
    def __init__(self, hosted: HostedPartitions, connector: InterBrokerConnector | None, config,
                 spawn: Callable[..., Any], log: Any, failed_logs: FailedLogs):
        """`hosted`: the partitions fetched into; `spawn(coro, name)`: a task the replica manager owns;
        `failed_logs(keys)`: those of the partitions whose log here has failed (not fetched)."""
        self._hosted = hosted
        self._connector = connector
        self._config = config
        self._spawn = spawn
        self._log = log
        self._failed_logs = failed_logs
        self._fetchers: dict[int, "Fetcher"] = {}
        self._source: dict[tuple[str, int], int] = {}

    def follow(self, key: tuple[str, int], leader: int) -> None:
        """Fetch `key` from `leader` from now on (-1: no leader, fetch from nobody)."""
        if self._source.get(key) == leader:
            return
        self.remove(key)
        if leader < 0:
            return
        fetcher = self._fetchers.get(leader)
        if fetcher is None:
            fetcher = self._fetchers[leader] = Fetcher(self._hosted, self._connector, self._config, leader,
                                                       self._log, self._failed_logs)
            fetcher.task = self._spawn(fetcher.run(), f"replica-fetcher-{leader}")
        fetcher.add(key)
        self._source[key] = leader

    def remove(self, key: tuple[str, int]) -> None:
        leader = self._source.pop(key, None)
        fetcher = self._fetchers.get(leader) if leader is not None else None
        if fetcher is not None:
            fetcher.keys.discard(key)

    def broker_changed(self, broker_id: int) -> None:
        fetcher = self._fetchers.get(broker_id)
        if fetcher is not None:
            fetcher.reconnect = True
            fetcher.wake.set()

    async def stop(self) -> None:
        fetchers = list(self._fetchers.values())
        self._fetchers.clear()
        for fetcher in fetchers:
            if fetcher.task is not None:
                fetcher.task.cancel()
        await asyncio.gather(*(f.task for f in fetchers if f.task is not None), return_exceptions=True)
        for fetcher in fetchers:
            await fetcher.close()


class Fetcher:
    def __init__(self, hosted: HostedPartitions, connector: InterBrokerConnector | None, config, leader: int,
                 log: Any, failed_logs: FailedLogs):
        self._hosted = hosted
        self._connector = connector
        self._log = log
        self._failed_logs = failed_logs
        self.leader = leader
        self.keys: set[tuple[str, int]] = set()
        self.wake = asyncio.Event()
        self.reconnect = False
        self.task: asyncio.Task | None = None
        self._channel = None
        self._backoff_s = config["replica.fetch.backoff.ms"] / 1000
        self._wait_ms = config["replica.fetch.wait.max.ms"]
        self._min_bytes = config["replica.fetch.min.bytes"]
        self._max_bytes = config["replica.fetch.max.bytes"]
        self._response_max_bytes = config["replica.fetch.response.max.bytes"]
        self._timeout_s = config["replica.socket.timeout.ms"] / 1000
        self._session_id, self._session_epoch = 0, 0  # 0, 0: the next fetch is a full one opening a session
        self._in_session: dict[tuple[str, int], tuple] = {}  # what the leader's session holds per partition
        self._sending: tuple[bool, dict, list] | None = None  # the fetch in flight: (full, sent, forgotten)

    def _reset_session(self) -> None:
        self._session_id, self._session_epoch, self._in_session = 0, 0, {}

    async def close(self) -> None:
        self._reset_session()
        if self._channel is not None:
            await self._channel.close()
            self._channel = None

    async def run(self) -> None:
        log = self._log.bind(fetcher=self.leader)
        while True:
            if not self.keys:
                self.wake.clear()
                await self.wake.wait()
                continue
            if self.reconnect:
                self.reconnect = False
                await self.close()
            try:
                if self._channel is None or self._channel.closed:
                    try:
                        self._channel = await self._connector.connect(self.leader, self._timeout_s,
                                                                  f"{CLIENT_ID_PREFIX}{self._hosted.broker_id}")
                    except InterBrokerConnectError as exc:
                        log.info("no connection to the leader", error=str(exc))
                        await self._back_off()
                        continue
                request = self._request()
                if request is None:
                    await self._back_off()
                    continue
                response = await self._channel.send_encoded(request.encode, REQUEST_CLASS,
                                                             self._timeout_s + self._wait_ms / 1000)
            except _FetchLeft:  # a partition to follow came while this fetch waited at the leader
                await self._abandon()
                continue
            except (ConnectionError, OSError, asyncio.TimeoutError, RequestParseError) as exc:
                log.info("replica fetch failed", error=repr(exc))
                await self.close()
                await self._back_off()
                continue
            if int(response.error_code) in _SESSION_ERRORS:  # evicted, or the leader restarted: a full fetch next
                log.info("fetch session reset", error=int(response.error_code))
                self._reset_session()
                continue
            self._session_answered(response)
            if self._handle(response, log):
                await self._back_off()

    def add(self, key: tuple[str, int]) -> None:
        """Follow `key` from this leader: in the next fetch, or at once in a new one when the fetch
        in flight and the session do not name it. The leader holds a caught-up follower's fetch up
        to replica.fetch.wait.max.ms (500 ms); Kafka's fetcher adds a new partition only to its next
        fetch, so a new topic's first acks=all record waited that long. The fetch in flight is left
        (its connection aborted: run() goes on at once with the next one)."""
        self.keys.add(key)
        self.wake.set()
        sending, channel = self._sending, self._channel
        if sending is not None and channel is not None and not channel.closed \
                and key not in self._in_session and key not in sending[1]:
            channel.abort(_FetchLeft())

    async def _abandon(self) -> None:
        """After a fetch left (its answer comes on a connection closed by then): go on with the next
        one on a new connection. The leader took an incremental fetch already (its session moved to
        the next epoch and holds what it carried); a full one opened a session whose id only its
        answer tells: the next fetch is a full one again."""
        full, sent, forgotten = self._sending or (True, {}, [])
        self._sending = None
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
        if full:
            self._reset_session()
        else:
            self._taken(sent, forgotten)

    async def _back_off(self) -> None:
        self.wake.clear()
        try:
            async with asyncio.timeout(self._backoff_s):
                await self.wake.wait()
        except TimeoutError:
            pass

    def _request(self) -> ReplicaFetch | None:
        """The next fetch: every partition followed from this leader (a full fetch), or only those
        whose fetch state differs from what the session holds, plus the forgotten ones."""
        wanted: dict[tuple[str, int], tuple] = {}
        failed = self._failed_logs(self.keys)
        for key in sorted(self.keys):
            partition = self._hosted.partitions.get(key)
            if partition is None or partition.leader_id != self.leader or key in failed:
                continue
            log = partition.log
            latest = log.latest_epoch()
            wanted[key] = (partition.leader_epoch, log.log_end_offset, latest if latest is not None else -1,
                           log.log_start_offset)
        if not wanted:
            return None
        full = self._session_id == 0
        sent = wanted if full else {k: v for k, v in wanted.items() if self._in_session.get(k) != v}
        forgotten = [] if full else [k for k in self._in_session if k not in wanted]
        self._sending = (full, sent, forgotten)
        topics: dict[str, list[tuple]] = {}
        for (topic, index), (epoch, offset, last_epoch, start) in sent.items():
            topics.setdefault(topic, []).append((index, epoch, offset, last_epoch, start, self._max_bytes))
        gone: dict[str, list[int]] = {}
        for topic, index in forgotten:
            gone.setdefault(topic, []).append(index)
        return ReplicaFetch(self._hosted.broker_id, self._wait_ms, self._min_bytes, self._response_max_bytes,
                            self._session_id, self._session_epoch, topics, gone)

    def _session_answered(self, response) -> None:
        """The leader took the fetch: the session now holds what was sent (FetchSessionHandler.handleResponse)."""
        full, sent, forgotten = self._sending or (True, {}, [])
        self._sending = None
        if int(response.error_code) != 0:
            self._reset_session()
            return
        if full:
            if int(response.session_id) == 0:  # the leader keeps no session (its cache is off): full fetches go on
                self._reset_session()
            else:
                self._session_id, self._session_epoch, self._in_session = int(response.session_id), 1, dict(sent)
                self._resend_failed(response)
            return
        self._taken(sent, forgotten)
        self._resend_failed(response)

    def _taken(self, sent: dict, forgotten: list) -> None:
        """The leader took an incremental fetch: its session holds what that fetch carried, and
        expects the next epoch (FetchSessionHandler; answered or left, the same)."""
        for key in forgotten:
            self._in_session.pop(key, None)
        self._in_session.update(sent)
        self._session_epoch = self._session_epoch + 1 if self._session_epoch < 0x7FFFFFFF else 1

    def _resend_failed(self, response) -> None:
        """A partition answered with an error goes in the next fetch again: the leader may not hold
        it in the session at all (a topic it does not know yet is refused, not kept), and nothing
        else would make this follower name it again. It stays known to the session (as matching
        no fetch state), so that once it is no longer followed from this leader it is forgotten:
        a leader whose session kept a partition answering an error (FENCED_LEADER_EPOCH for a
        follower that moved on) answers every fetch at once, and the follower, which skips a
        partition it no longer follows from there, fetched again at once, for ever."""
        for topic in response.responses:
            for data in topic.partitions:
                key = (topic.topic, data.partition_index)
                if int(data.error_code) != 0 and key in self._in_session:
                    self._in_session[key] = None

    def _handle(self, response, log) -> bool:
        """Apply the leader's answer; True when something failed (back off before the next fetch)."""
        failed = int(response.error_code) != 0
        for topic in response.responses:
            for data in topic.partitions:
                key = (topic.topic, data.partition_index)
                partition = self._hosted.partitions.get(key)
                if partition is None or partition.leader_id != self.leader or partition.is_leader:
                    continue
                try:
                    failed |= not self._apply(partition, data)
                except KafkaError as exc:
                    log.warning("follower append failed", topic=key[0], partition=key[1], error=exc.code.name)
                    failed = True
        return failed

    def _apply(self, partition, data) -> bool:
        log = partition.log
        error = ErrorCode(int(data.error_code))
        if error == ErrorCode.offset_out_of_range:
            if log.log_end_offset < data.log_start_offset or data.high_watermark < 0:
                log.truncate_fully_and_start_at(max(data.log_start_offset, 0))
            else:
                log.truncate_to(min(log.log_end_offset, data.high_watermark))
            return True
        if error != ErrorCode.none:
            return False
        diverging = data.diverging_epoch
        if diverging is not None and diverging.epoch >= 0:
            epoch, end = log.end_offset_for_epoch(diverging.epoch)
            target = min(diverging.end_offset, end) if epoch == diverging.epoch else diverging.end_offset
            log.truncate_to(min(target, log.log_end_offset))
            return True
        if data.records:
            log.append_as_follower(bytes(data.records))
            self._hosted.replicated_in(len(data.records))
        before = log.high_watermark
        log.high_watermark = min(data.high_watermark, log.log_end_offset)  # then the log start, as Kafka's
        if data.log_start_offset > log.log_start_offset:  # processPartitionData (DeleteRecords, retention)
            log.advance_log_start_offset(min(data.log_start_offset, log.high_watermark))
        if log.high_watermark != before:  # consumers reading from this follower (KIP-392) may have news
            self._hosted.high_watermark_moved(partition)
        return True
