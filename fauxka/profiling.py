"""A broker's own CPU profile, for benchmarks only: with FAUXKA_PROFILE=<directory> in its
environment, SIGUSR1 starts cProfile (the main thread's CPU time: the machine is shared, wall time
is noise) and SIGUSR2 stops it and writes `<directory>/broker-<pid>-<n>.prof` (pstats format),
n counting from 1. Two signals, not one toggle: signals sent back to back may reach Python as one
call. A benchmark brackets exactly the window it measures (bench/latency.py --profile). Off (no
handler, no profiler) without the variable."""

import cProfile
import os
import signal
import time
from pathlib import Path

ENV = "FAUXKA_PROFILE"


def install() -> None:
    """Arm SIGUSR1 / SIGUSR2 when FAUXKA_PROFILE names a directory."""
    directory = os.environ.get(ENV)
    if not directory:
        return
    state: dict = {"profile": None, "n": 0}

    def start(_signum, _frame) -> None:
        if state["profile"] is None:
            state["profile"] = cProfile.Profile(time.thread_time)
            state["profile"].enable()

    def stop(_signum, _frame) -> None:
        profile = state["profile"]
        if profile is None:
            return
        profile.disable()
        state["profile"], state["n"] = None, state["n"] + 1
        Path(directory).mkdir(parents=True, exist_ok=True)
        profile.dump_stats(Path(directory) / f"broker-{os.getpid()}-{state['n']}.prof")

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
