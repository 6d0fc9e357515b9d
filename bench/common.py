"""Shared by the benchmarks: a throw-away local cluster and a few measurements."""

import contextlib
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from fauxka.broker.protocol.build import build
from fauxka.broker.protocol.client import KafkaConnection
from fauxka.broker.protocol.codec import request_schema
from fauxka import launcher
from fauxka.ports import free_ports


@dataclasses.dataclass(frozen=True)
class LocalCluster:
    ports: dict[int, int]  # broker id -> Kafka port
    metrics: dict[int, int]  # broker id -> /metrics port
    data_dir: Path

    def pids(self) -> dict[int, int]:
        state = json.loads((self.data_dir / launcher.STATE_FILE).read_text())
        return {b["id"]: b["pid"] for b in state["brokers"]}

    def cpu_s(self) -> dict[int, float]:
        """Each broker process's CPU time so far (user + system), in seconds."""
        out = {}
        for broker_id, pid in self.pids().items():
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            out[broker_id] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return out

    def signal(self, signum: int, skip: tuple[int, ...] = ()) -> None:
        """Send `signum` to every broker process but those of `skip` (profile windows: fauxka/profiling.py)."""
        for broker_id, pid in self.pids().items():
            if broker_id not in skip:
                os.kill(pid, signum)

    def rss_mb(self) -> dict[int, float]:
        """Each broker process's resident memory (VmRSS), in MB."""
        out = {}
        for broker_id, pid in self.pids().items():
            status = Path(f"/proc/{pid}/status").read_text()
            out[broker_id] = int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1)) / 1024
        return out


@contextlib.contextmanager
def local_cluster(brokers: int = 3, overrides: tuple[str, ...] = (), zookeeper: str | None = None,
                  tree: Path | None = None):
    """Start (ZooKeeper unless given and) brokers with `fauxka up --detach`; yields a LocalCluster.
    With `tree` (a checkout of other code, e.g. `git worktree add DIR <commit>`), `fauxka up` runs
    there, so its brokers run that code: before/after pairs in one benchmark."""
    _exit_on_sigterm()
    with tempfile.TemporaryDirectory(prefix="fauxka-bench-") as tmp:
        data_dir = Path(tmp)
        base, metrics_base = free_ports(brokers), free_ports(brokers + 1)
        opts = launcher.UpOptions(brokers=brokers, zookeeper=zookeeper, zookeeper_port=free_ports(), data_dir=data_dir,
                                  base_port=base, metrics_base_port=metrics_base, overrides=overrides,
                                  detach=True, timeout_s=60)
        if tree is not None:
            _up_in(Path(tree), opts)
        else:
            with contextlib.redirect_stdout(None):
                if launcher.up(opts) != 0:
                    raise RuntimeError(f"fauxka up failed; logs in {data_dir}")
        try:
            yield LocalCluster({i: base + i - 1 for i in range(1, brokers + 1)},
                               {i: metrics_base + i for i in range(1, brokers + 1)}, data_dir)
        finally:
            with contextlib.redirect_stdout(None):
                launcher.down(data_dir)


def _exit_on_sigterm() -> None:
    """SIGTERM (`timeout`, a killed run) exits through Python, so the cluster is stopped on the way
    out; by default it ended the process at once and left ZooKeeper and the brokers running."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))


def _up_in(tree: Path, opts: "launcher.UpOptions") -> None:
    """`fauxka up --detach` from `tree`'s directory (its packages first on sys.path); the state
    file it writes is the one this code reads (pids) and `launcher.down` stops."""
    command = [sys.executable, "-m", "fauxka", "up", "--detach", "--brokers", str(opts.brokers),
               "--data-dir", str(opts.data_dir), "--base-port", str(opts.base_port),
               "--metrics-base-port", str(opts.metrics_base_port), "--timeout", str(opts.timeout_s)]
    command += ["--zookeeper", opts.zookeeper] if opts.zookeeper else ["--zookeeper-port", str(opts.zookeeper_port)]
    for item in opts.overrides:
        command += ["--override", item]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, timeout=opts.timeout_s * 3)
    if done.returncode != 0:
        raise RuntimeError(f"fauxka up in {tree} failed: {done.stderr.strip()[-500:]}; logs in {opts.data_dir}")


def _scrape(metrics_port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as response:
        return response.read().decode()


def zk_requests(metrics_port: int) -> dict[str, float]:
    """The broker's ZooKeeper round trips so far, by kind (from its /metrics)."""
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r'^fauxka_zookeeper_requests\{kind="(\w+)"\} (\S+)$', _scrape(metrics_port), re.M)}


def requests_by_api(cluster: "LocalCluster") -> dict[str, float]:
    """Requests the brokers answered so far, by api (Kafka's RequestMetrics RequestsPerSec, summed over
    brokers and versions; a Fetch's second count, as FetchConsumer or FetchFollower, left out)."""
    out: dict[str, float] = {}
    for port in cluster.metrics.values():
        for m in re.finditer(r'^kafka_network_requestmetrics_requests_total\{[^}]*request="(\w+)"[^}]*\} (\S+)$', _scrape(port), re.M):
            if m.group(1) not in ("FetchConsumer", "FetchFollower"):
                out[m.group(1)] = out.get(m.group(1), 0) + float(m.group(2))
    return out


def per_unit(after: dict[str, float], before: dict[str, float], units: float, label: str) -> dict[str, float]:
    """{"<label> (<api>)": requests per unit} for the apis that moved between two requests_by_api."""
    return {f"{label} ({api})": (n - before.get(api, 0)) / units for api, n in sorted(after.items())
            if n - before.get(api, 0) >= units / 100}


def leader_partitions(metrics_port: int) -> int:
    """The partitions the broker leads (its replica manager's, not its metadata cache's)."""
    return int(float(re.search(r"^kafka_server_replicamanager_leadercount (\S+)$", _scrape(metrics_port), re.M).group(1)))


def cache_size(metrics_port: int) -> tuple[int, int]:
    """(topics, partition states) in the broker's metadata cache."""
    text = _scrape(metrics_port)
    return tuple(int(float(re.search(rf"^{name} (\S+)$", text, re.M).group(1)))
                 for name in ("fauxka_metadata_topics", "fauxka_metadata_partitions"))


def wait_caches(cluster: "LocalCluster", topics: int, partitions: int, timeout_s: float = 120) -> None:
    """Until every broker's cache holds `topics` topics and `partitions` partition states."""
    deadline = time.monotonic() + timeout_s
    while any(cache_size(port) != (topics, partitions) for port in cluster.metrics.values()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"caches did not reach {topics} topics: "
                               f"{[cache_size(p) for p in cluster.metrics.values()]}")
        time.sleep(0.02)


def delta(after: dict[str, float], before: dict[str, float]) -> dict[str, int]:
    return {k: int(after[k] - before.get(k, 0)) for k in after}


async def controller_of(port: int) -> int:
    """The controller id a broker's Metadata names (the benchmarks run advertised.controller=active)."""
    conn = await KafkaConnection.open("127.0.0.1", port, 10)
    try:
        md = await conn.send(build(request_schema(3, 12), {"topics": [], "allow_auto_topic_creation": False,
                                                           "include_topic_authorized_operations": False}), 10)
        return md.controller_id
    finally:
        await conn.close()
