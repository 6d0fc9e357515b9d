"""Incremental fetch sessions (KIP-227): Kafka's FetchSessionCache in small, socket-free.

A full fetch with session epoch 0 opens a session holding its partitions; each later fetch
names the session id and the next epoch, carries only the partitions that changed (added or
with a new fetch offset) and the ones to forget, and gets back only the partitions with news
(records, an error, or a moved high watermark, last stable offset or log start offset). As in
Kafka (FetchManager.newContext), an incremental fetch moves the session to its next epoch when it
is taken, not when it is answered: a follower may leave a fetch the leader holds and send the next
one on another connection (fauxka/broker/replication/fetcher.py); the one left no longer marks
what the session has sent (superseded()). Epoch
-1 with a session id closes it (that fetch is sessionless); an unknown id is
FETCH_SESSION_ID_NOT_FOUND, a wrong epoch INVALID_FETCH_SESSION_EPOCH. The cache holds at most
max.incremental.fetch.session.cache.slots sessions; when full the least recently used one
goes, as Kafka evicts, and a new session is refused only when that one is in use right now.
"""

import itertools
import random
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from fauxka.model.errors import ErrorCode

INITIAL_EPOCH, FINAL_EPOCH = 0, -1


@dataclass(slots=True)
class SessionPartition:
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    log_start_offset: int = -1
    sent: tuple[int, int, int] | None = None  # (hw, lso, log start) last sent to the client


@dataclass(slots=True)
class Session:
    id: int
    epoch: int  # the epoch the next request must carry
    partitions: "OrderedDict[tuple[str, int], SessionPartition]" = field(default_factory=OrderedDict)
    topic_ids: dict[str, object] = field(default_factory=dict)
    last_used: float = 0.0


class FetchSessionCache:
    def __init__(self, max_sessions: int = 1000):
        self._max = max_sessions
        self._sessions: "OrderedDict[int, Session]" = OrderedDict()
        self._ids = itertools.count(random.randrange(1, 1 << 30))

    def __len__(self) -> int:
        return len(self._sessions)

    def begin(self, session_id: int, epoch: int) -> tuple[ErrorCode, Session | None, bool]:
        """(error, session, full): the session this request works on (None: sessionless) and
        whether its partitions are the whole set (a full fetch) or changes to apply."""
        if session_id == 0:
            if epoch == FINAL_EPOCH:
                return ErrorCode.none, None, True
            if epoch != INITIAL_EPOCH:
                return ErrorCode.invalid_fetch_session_epoch, None, True
            return ErrorCode.none, self._new(), True
        session = self._sessions.get(session_id)
        if epoch == FINAL_EPOCH:
            self._sessions.pop(session_id, None)
            return ErrorCode.none, None, True
        if session is None:
            return ErrorCode.fetch_session_id_not_found, None, True
        if epoch != session.epoch:
            return ErrorCode.invalid_fetch_session_epoch, None, True
        self._sessions.move_to_end(session_id)
        session.last_used = time.monotonic()
        self.advance(session)
        return ErrorCode.none, session, False

    @staticmethod
    def superseded(session: Session, taken_at: int) -> bool:
        """Whether a later fetch of the session was taken since the one that left it at epoch
        `taken_at` (its answer then goes to a fetcher that has moved on: it marks nothing)."""
        return session.epoch != taken_at

    def partitions_of(self, session_id: int) -> tuple[tuple[str, int], ...]:
        """The (topic, partition)s the session holds (none for an unknown id), as they stand
        before the next request is applied; a look only (the session is not used by it)."""
        session = self._sessions.get(session_id) if session_id else None
        return tuple(session.partitions) if session is not None else ()

    def _new(self) -> Session | None:
        if len(self._sessions) >= self._max:
            if self._max <= 0:
                return None
            self._sessions.popitem(last=False)  # the least recently used
        session = Session(next(self._ids) & 0x7FFFFFFF or 1, 0, last_used=time.monotonic())  # 1 after this answer
        self._sessions[session.id] = session
        return session

    def discard(self, session: Session) -> None:
        """A full fetch answered throttled creates no session (FullFetchContext.getThrottledResponse
        answers INVALID_SESSION_ID): the one begin() opened for it goes."""
        self._sessions.pop(session.id, None)

    @staticmethod
    def update(session: Session, wanted: dict[tuple[str, int], SessionPartition],
               forgotten: list[tuple[str, int]]) -> None:
        """An incremental request: add or update `wanted`, drop `forgotten`."""
        for key in forgotten:
            session.partitions.pop(key, None)
        for key, part in wanted.items():
            known = session.partitions.get(key)
            if known is not None:
                part.sent = known.sent
                session.partitions.move_to_end(key)
            session.partitions[key] = part

    @staticmethod
    def changed(part: SessionPartition, error: ErrorCode, records: bytes, marks: tuple[int, int, int],
                must: bool = False) -> bool:
        """Whether an incremental response includes this partition; remembers what it sent. `must`:
        the answer names a diverging epoch or a preferred read replica (CachedPartition's mustRespond)."""
        include = must or bool(records) or error != ErrorCode.none or part.sent != marks
        part.sent = marks
        return include

    @staticmethod
    def advance(session: Session) -> None:
        """The epoch the next request must carry: once an incremental fetch is taken, once a new
        session's first answer is sent (fetch offsets come with the partitions the client sends
        again, KIP-227's "altered" partitions)."""
        session.epoch = session.epoch + 1 if session.epoch < 0x7FFFFFFF else 1
