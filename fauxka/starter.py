"""Broker processes forked after one import of the broker code: importing it is most of a broker's
start-up time (~0.3 s of CPU), so it is paid once and each broker is a fork.

- `fauxka brokers --config A --config B`: import, fork one process per config, print their ids,
  exit (`fauxka up`, `fauxka restart`);
- `fauxka starter`: a kept, pre-forked interpreter (the Android zygote's idea). It imports the
  broker code once, then forks brokers whenever asked on its standard input, one JSON line per
  request, and answers their process ids on its standard output; it exits when its input closes.
  `Starter` is its owner's side: the pytest plugin starts one while the session's ZooKeeper
  starts, so a cluster's start pays only the brokers' own start (ZooKeeper session, registration,
  controller election).

Each broker runs in its own session with its output in `<config>.out`, as if started alone.
"""

import importlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

from . import zookeeper
from .launcher import BrokersNotStarted


class StarterError(BrokersNotStarted):
    pass


def _import_broker() -> None:
    importlib.import_module("fauxka.broker.app")  # what the forked processes share
    importlib.import_module("uvloop")


def fork_brokers(config_paths: list[str], overrides: list[str], wait_zookeeper: str | None = None,
                 wait_timeout_s: float = 60.0) -> list[int]:
    """Fork one broker per config file (broker.config.load_config errors raise before any fork)."""
    from fauxka.broker.config import load_config

    configs = [(Path(path), load_config(path, overrides)) for path in config_paths]
    pids = []
    for path, config in configs:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _forked_broker(path.with_suffix(".out"), config, wait_zookeeper, wait_timeout_s)  # never returns
        pids.append(pid)
    return pids


def brokers_command(args) -> int:
    """`fauxka brokers`: fork them, print their ids, exit."""
    from fauxka.broker.config import ConfigError

    _import_broker()
    try:
        pids = fork_brokers(args.config, args.override, args.wait_zookeeper, args.wait_timeout)
    except (ConfigError, OSError) as exc:
        print(f"fauxka brokers: {exc}", file=sys.stderr)
        return 2
    for pid in pids:
        print(pid, flush=True)
    sys.stderr.flush()
    os._exit(0)  # nothing to clean up: finalizing the imports would only keep the launcher waiting (~60 ms)


def starter_command() -> int:
    """`fauxka starter`: requests {"configs": [...], "overrides": [...], "wait_zookeeper": "h:p"|null}
    on stdin, answers {"pids": [...]} or {"error": "..."} on stdout, until stdin closes."""
    from fauxka.broker.config import ConfigError

    _import_broker()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the brokers are reaped by the kernel: no zombies
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C of the owner's terminal: its input closes
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        try:
            request = json.loads(line)
            answer = {"pids": fork_brokers(request["configs"], request.get("overrides", []),
                                           request.get("wait_zookeeper"))}
        except (ConfigError, OSError, ValueError, KeyError) as exc:
            answer = {"error": str(exc)}
        print(json.dumps(answer), flush=True)
    os._exit(0)


def _forked_broker(out: Path, config, wait_zookeeper: str | None, wait_timeout_s: float) -> None:
    code = 1
    try:
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(null)
        os.close(log)
        code = run_broker(config, wait_zookeeper, wait_timeout_s)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)  # never back into the forking code


def run_broker(config, wait_zookeeper: str | None = None, wait_timeout_s: float = 60.0) -> int:
    from fauxka.broker.app import run
    import uvloop

    from . import profiling

    profiling.install()  # FAUXKA_PROFILE: benchmarks only

    if wait_zookeeper:  # the imports overlapped with ZooKeeper's start
        host, _, port = wait_zookeeper.rpartition(":")
        try:
            zookeeper.wait_serving(host, int(port), wait_timeout_s)
        except zookeeper.ZooKeeperError:
            pass  # the broker's own connection attempt reports it
    return uvloop.run(run(config))


class Starter:
    """The owner's side of `fauxka starter`: start it (it imports in the background), then
    `fork(configs, overrides)` -> the brokers' process ids. Thread-safe; `close()` ends it (the
    brokers it forked keep running: their owners stop them)."""

    def __init__(self, log_path: Path | None = None):
        err = open(log_path, "ab") if log_path else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen([sys.executable, "-m", "fauxka", "starter"], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        finally:
            if log_path:
                err.close()
        self._lock = threading.Lock()
        self._ready = False

    def _answer(self, deadline: float) -> dict:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise StarterError("the starter did not answer in time")
            if select.select([self.process.stdout], [], [], left)[0]:
                line = self.process.stdout.readline()
                if not line:
                    raise StarterError(f"the starter exited (code {self.process.wait(5)})")
                return json.loads(line)

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        """Until its import is done (fork() waits for it too)."""
        with self._lock:
            self._wait_ready(time.monotonic() + timeout_s)

    def _wait_ready(self, deadline: float) -> None:
        if self.process.poll() is not None:
            raise StarterError(f"the starter exited (code {self.process.returncode})")
        if not self._ready:
            self._answer(deadline)
            self._ready = True

    def fork(self, configs: list[Path], overrides: list[str] = (), wait_zookeeper: str | None = None,
             timeout_s: float = 60.0) -> list[int]:
        deadline = time.monotonic() + timeout_s
        with self._lock:
            self._wait_ready(deadline)
            request = {"configs": [str(c) for c in configs], "overrides": list(overrides),
                       "wait_zookeeper": wait_zookeeper}
            try:
                self.process.stdin.write(json.dumps(request).encode() + b"\n")
                self.process.stdin.flush()
            except BrokenPipeError:
                raise StarterError(f"the starter exited (code {self.process.wait(5)})") from None
            answer = self._answer(deadline)
        if "error" in answer:
            raise StarterError(answer["error"])
        return answer["pids"]

    def close(self) -> None:
        with self._lock:
            if self.process.stdin and not self.process.stdin.closed:
                self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
            self.process.stdout.close()

    def __enter__(self) -> "Starter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
