"""Process faults through the state file `fauxka up` keeps (cluster.json in its data dir):
`fauxka kill|terminate|pause|resume|restart BROKER|zookeeper`. The foreground supervisor re-reads the file,
so a broker stopped on purpose does not stop the cluster, and a restarted one is watched again."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import launcher, zookeeper
from .pids import alive

ACTIONS = ("kill", "terminate", "pause", "resume", "restart")
ZOOKEEPER = "zookeeper"  # the target naming `up`'s ZooKeeper rather than a broker


class ProcessFaultError(Exception):
    pass


def _broker(state: dict, broker_id: int) -> dict:
    for b in state.get("brokers", []):
        if b["id"] == broker_id:
            return b
    ids = [b["id"] for b in state.get("brokers", [])]
    raise ProcessFaultError(f"no broker {broker_id} in this cluster (brokers: {ids})")


def act(data_dir: Path, action: str, broker_id: "int | str", timeout_s: float = 30.0, starter=None) -> str:
    """Do `action` to one broker (or, with broker_id "zookeeper", to the ZooKeeper `fauxka up` started)
    of the cluster `fauxka up` started from data_dir; what was done. `starter` (a
    fauxka.starter.Starter) forks a restarted broker at once."""
    if action not in ACTIONS:
        raise ProcessFaultError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
    data_dir = data_dir.resolve()
    state = launcher._read_state(data_dir)
    if state is None:
        raise ProcessFaultError(f"no cluster state in {data_dir} (start one with fauxka up)")
    b, name = _process(state, broker_id)
    pid = b.get("pid")
    running = bool(pid) and not b.get("stopped") and alive(pid)
    if action == "pause":
        _need(running, name)
        os.kill(pid, signal.SIGSTOP)
        return f"{name} (pid {pid}) paused"
    if action == "resume":
        _need(running, name)
        os.kill(pid, signal.SIGCONT)
        return f"{name} (pid {pid}) resumed"
    if action in ("kill", "terminate"):
        _need(running, name)
        b["stopped"] = True
        launcher._write_state(data_dir, state)  # first: the supervisor must not take it for a crash
        if action == "kill":
            os.kill(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGTERM)
        _wait_gone(pid, timeout_s)
        return f"{name} (pid {pid}) {'killed' if action == 'kill' else 'terminated'}"
    if running:  # restart: stop it first (SIGTERM: controlled shutdown), then start it again
        act(data_dir, "terminate", broker_id, timeout_s)
        state = launcher._read_state(data_dir)
        b, name = _process(state, broker_id)
    if broker_id == ZOOKEEPER:
        b["pid"] = _start_zookeeper(data_dir, b["port"], timeout_s)
    else:
        _wait_deregistered(state, broker_id, timeout_s)
        b["pid"] = _start(data_dir, state, broker_id, timeout_s, starter)
    b["stopped"] = False
    launcher._write_state(data_dir, state)
    return f"{name} restarted (pid {b['pid']})"


def _process(state: dict, target: "int | str") -> tuple[dict, str]:
    """The state file's entry of a broker or of ZooKeeper, and its name."""
    if target != ZOOKEEPER:
        return _broker(state, target), f"broker {target}"
    if not state.get("zookeeper"):
        raise ProcessFaultError("this cluster's ZooKeeper was not started by fauxka up (it was given with "
                                "--zookeeper): stop and start it yourself")
    return state["zookeeper"], "ZooKeeper"


def _start_zookeeper(data_dir: Path, port: int, timeout_s: float) -> int:
    """ZooKeeper again on its port and data dir (`up`'s): its sessions survive if it was not down
    for longer than their timeout (it restores them and restarts their timers)."""
    try:
        process = zookeeper.start(data_dir / "zookeeper", port)
        zookeeper.wait_serving("127.0.0.1", port, timeout_s, process)
    except zookeeper.ZooKeeperError as exc:
        raise ProcessFaultError(f"ZooKeeper did not start again: {exc}") from None
    return process.pid


def _need(running: bool, name: str) -> None:
    if not running:
        raise ProcessFaultError(f"{name} is not running")


def _wait_gone(pid: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 5
        time.sleep(0.02)


def _wait_deregistered(state: dict, broker_id: int, timeout_s: float) -> None:
    """A killed broker's registration stays until its ZooKeeper session expires; a new process
    with its id would find the id taken and exit (as Kafka's does)."""
    from .faults import FaultClient

    client = FaultClient(state["zookeeper_connect"], timeout_s=10)
    try:
        deadline = time.monotonic() + timeout_s
        while client.get(f"/brokers/ids/{broker_id}") is not None:
            if time.monotonic() > deadline:
                raise ProcessFaultError(f"broker {broker_id} is still registered after {timeout_s}s")
            time.sleep(0.1)
    finally:
        client.close()


def _start(data_dir: Path, state: dict, broker_id: int, timeout_s: float, starter=None) -> int:
    """`fauxka brokers` with the broker's config as `up` wrote it: it forks the broker and prints its id."""
    if starter is not None:
        from .starter import StarterError

        try:
            return starter.fork([data_dir / f"broker-{broker_id}.properties"], state.get("overrides", []),
                                None, timeout_s)[0]
        except StarterError as exc:
            raise ProcessFaultError(f"broker {broker_id} did not start: {exc}") from None
    command = [sys.executable, "-m", "fauxka", "brokers", "--config", str(data_dir / f"broker-{broker_id}.properties")]
    for item in state.get("overrides", []):
        command += ["--override", item]
    with open(data_dir / "brokers.out", "ab") as out:
        starter = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=out, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    try:
        stdout, _ = starter.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        starter.kill()
        raise ProcessFaultError(f"broker {broker_id} did not start within {timeout_s}s") from None
    if starter.returncode != 0 or not stdout.split():
        raise ProcessFaultError(f"broker {broker_id} did not start (exit code {starter.returncode})")
    return int(stdout.split()[0])
