"""Hypothesis state machine: a PartitionLog on disk against a list of (offset, value), through
appends of every codec, rolls, truncations, log start moves and restarts."""

import shutil
import tempfile

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from fauxka.storage.config import LogConfig
from fauxka.storage.log import PartitionLog
from tests.unit.storage.helpers import now_ms, records_of, v2

CONFIG = LogConfig(segment_bytes=1500, index_interval_bytes=300)


class LogModel(RuleBasedStateMachine):
    on_disk = True

    def __init__(self):
        super().__init__()
        self.dir = tempfile.mkdtemp()
        self.log = PartitionLog.load("m", 0, CONFIG, self.path)
        self.model: list[tuple[int, bytes]] = []
        self.batches: list[tuple[int, int]] = []  # (first, last) offsets of each batch
        self.start = 0
        self.next = 0

    @property
    def path(self):
        return self.dir + "/m-0" if self.on_disk else None

    def teardown(self):
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    @rule(n=st.integers(1, 8), codec=st.integers(0, 4), size=st.integers(0, 120))
    def append(self, n, codec, size):
        values = [bytes([65 + (self.next + i) % 26]) * size for i in range(n)]
        info = self.log.append_as_leader(v2(n, codec, values=values), 1, now_ms())
        assert info.first_offset == self.next
        self.model += [(self.next + i, values[i]) for i in range(n)]
        self.batches.append((self.next, self.next + n - 1))
        self.next += n

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def truncate(self, data):
        first, _ = data.draw(st.sampled_from(self.batches))
        if first < self.start:
            return
        self.log.truncate_to(first)
        self.model = [(o, v) for o, v in self.model if o < first]
        self.batches = [b for b in self.batches if b[0] < first]
        self.next = first

    @rule()
    def roll(self):
        self.log.roll(now_ms())

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def advance_start(self, data):
        self.log.high_watermark = self.next
        target = data.draw(st.integers(self.start, self.next))
        self.log.advance_log_start_offset(target)
        self.start = max(self.start, target)

    @precondition(lambda self: self.on_disk)
    @rule()
    def restart(self):
        start, recovery = self.log.log_start_offset, self.log.log_end_offset
        self.log.close()
        self.log = PartitionLog.load("m", 0, CONFIG, self.path, log_start_offset=start, recovery_point=recovery)

    @invariant()
    def reads_match(self):
        assert self.log.log_end_offset == self.next
        assert self.log.log_start_offset == self.start
        got, offset = [], self.start
        while offset < self.next:
            recs = records_of(self.log.read(offset, 700, self.next, True))
            assert recs, f"nothing read at {offset}"
            got += [(o, v) for o, _, _, v, _ in recs if o >= self.start and o >= offset]
            offset = recs[-1][0] + 1
        assert got == [(o, v) for o, v in self.model if o >= self.start]


class MemoryLogModel(LogModel):
    on_disk = False


TestLogModel = LogModel.TestCase
TestLogModel.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)
TestMemoryLogModel = MemoryLogModel.TestCase
TestMemoryLogModel.settings = settings(max_examples=25, stateful_step_count=25, deadline=None)
