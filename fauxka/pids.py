"""Processes by pid, ours or not (brokers forked by a starter are not our children): signalled,
told alive from gone (a zombie counts as gone), reaped when ours."""

import os
import signal
import time


def terminate(pids: list[int], grace_s: float) -> None:
    """SIGTERM each (SIGCONT first: a paused broker must see it), SIGKILL what is left after `grace_s`."""
    for pid in pids:
        send_signal(pid, signal.SIGCONT)  # a paused broker (fauxka pause) must see the SIGTERM
        send_signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.05)
    for pid in pids:
        if alive(pid):
            send_signal(pid, signal.SIGKILL)
    for pid in pids:
        reap(pid)


def send_signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def alive(pid: int) -> bool:
    reap(pid)  # a zombie child of ours counts as gone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return True
