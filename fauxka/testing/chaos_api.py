"""Chaos from Python: your own application under `fauxka chaos`'s nemesis, and the checker over
your own history.

    from fauxka.testing import Cluster, chaos
    with Cluster(3) as cluster, chaos(cluster, seed=7, duration_s=60, topic="orders") as run:
        my_app(cluster.bootstrap, record=run.history.record)   # record send/ack/poll/commit/txn events
    verdict = run.check()      # after the block: every fault healed; read-back events recorded by you
    assert verdict.ok, verdict.describe()

`run_chaos(cluster, seed=..., duration_s=...)` is the whole built-in run (workloads, read-back,
checks) that `fauxka chaos` does, returning its Result."""

import contextlib
import time
from pathlib import Path

from fauxka.chaos.checker import Verdict, check
from fauxka.chaos.history import History
from fauxka.chaos.nemesis import Nemesis
from fauxka.chaos.run import Options, make_schedule


class ChaosSession:
    def __init__(self, history: History, steps, nemesis: Nemesis):
        self.history, self.steps, self.nemesis = history, steps, nemesis

    def check(self) -> Verdict:
        return check(self.history.events)


@contextlib.contextmanager
def chaos(cluster, *, seed: int, duration_s: float, nemeses: tuple[str, ...] = (), topic: str | None = None,
          partitions: int = 1, groups: tuple[str, ...] = (), transactional_ids: tuple[str, ...] = (),
          max_down: int | None = None, history_path: str | Path | None = None, mean_fault_s: float = 6.0):
    """The seeded nemesis on `cluster` while the block runs (faults past `duration_s` are not
    started); every fault is healed when the block ends, however it ends. `topic`/`partitions`:
    what `leader` and `storage` faults aim at (without a topic they are left out); `groups` and
    `transactional_ids`: the coordinators `coordinator` moves."""
    if not nemeses:
        from fauxka.chaos.schedule import NEMESES

        nemeses = tuple(n for n in NEMESES if (topic or n not in ("leader", "storage"))
                        and (groups or transactional_ids or n != "coordinator"))
    options = Options(seed=seed, duration_s=duration_s, nemeses=tuple(nemeses), partitions=partitions,
                      max_down=max_down, mean_fault_s=mean_fault_s)
    _, steps, _ = make_schedule(options, cluster.broker_ids, cluster.has_processes)
    history = History(Path(history_path) if history_path else None)
    history.record("run", seed=seed, duration_s=duration_s, nemeses=list(nemeses), schedule=[s.to_json() for s in steps])
    nemesis = Nemesis(cluster, steps, history, topic=topic, groups=tuple(groups),
                      transactional_ids=tuple(transactional_ids))
    session = ChaosSession(history, steps, nemesis)
    nemesis.start()
    try:
        yield session
    finally:
        nemesis.stop()
        history.record("note", what="healed")


def run_chaos(cluster, *, seed: int, duration_s: float, out: str | Path | None = None, **options):
    """The built-in run on `cluster` (fauxka.chaos.run.Options' fields as keywords); its Result."""
    from fauxka.chaos.run import ChaosRun

    started = time.monotonic()
    result = ChaosRun(cluster, Options(seed=seed, duration_s=duration_s, out=Path(out) if out else None,
                                       log=options.pop("log", None), **options)).run()
    result.elapsed_s = time.monotonic() - started
    return result
