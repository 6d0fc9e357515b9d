"""The cluster under faults (issue 5): "separate hosts", like docker-compose's network.

ZooKeeper and each of three brokers run in their own Linux network namespace with their own
address on one bridge (10.201.<n>.0/24, made here and torn down after). The bridge lives in the
root namespace with an address, so the test itself reaches every host directly. One broker's link
is cut: its ZooKeeper session expires and /brokers/ids/2 goes away; when the link comes back the
broker registers again.

Needs `ip` and the right to make namespaces (root / CAP_NET_ADMIN); skipped otherwise.
"""

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fauxka import probe, zookeeper
from tests.harness import SESSION_TIMEOUT_MS, wait_for
from tests.integration.faults_support import ZkWatcher

SESSION_S = SESSION_TIMEOUT_MS / 1000
REPO = Path(__file__).resolve().parents[2]
ZK_PORT, KAFKA_PORT = 2181, 9092
BROKERS = (1, 2, 3)


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=15, check=check)


def _free_subnet() -> int:
    """A 10.201.<n>.0/24 that nothing in the root namespace uses yet (other runs may hold some)."""
    used = _ip("-4", "addr", "show").stdout + _ip("-4", "route", "show").stdout
    start = os.getpid() % 250
    for i in range(250):
        n = (start + i) % 250 + 1
        if f"10.201.{n}." not in used:
            return n
    pytest.skip("no free 10.201.<n>.0/24 subnet")


class NetnsCluster:
    """The topology and its processes; `close()` undoes everything that was made, in any state."""

    def __init__(self, work_dir: Path):
        self.work_dir = work_dir
        self.tag = f"fx{os.getpid()}"
        self.bridge = f"{self.tag}br"
        self.namespaces: dict[str, str] = {}  # host -> namespace
        self.root_links: list[str] = []
        self.forward_rule: list[str] | None = None  # an iptables FORWARD rule this run added
        self.processes: list[subprocess.Popen] = []
        self.brokers: dict[int, subprocess.Popen] = {}
        self.chroot = f"/fauxka-netns-{os.getpid()}"
        self.n = _free_subnet()
        self.ips = {"zk": f"10.201.{self.n}.2", **{f"b{i}": f"10.201.{self.n}.{10 + i}" for i in BROKERS}}

    # --- the network ---

    def build_network(self) -> None:
        first = f"{self.tag}-zk"
        probe_ns = _ip("netns", "add", first, check=False)
        if probe_ns.returncode != 0:
            pytest.skip(f"cannot create network namespaces (`ip netns add` failed: {probe_ns.stderr.strip()})")
        self.namespaces["zk"] = first
        for host in (f"b{i}" for i in BROKERS):
            ns = f"{self.tag}-{host}"
            _ip("netns", "add", ns)
            self.namespaces[host] = ns
        _ip("link", "add", self.bridge, "type", "bridge")
        self.root_links.append(self.bridge)
        _ip("addr", "add", f"10.201.{self.n}.1/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        self._let_the_bridge_forward()
        for host, ns in self.namespaces.items():
            outer = f"{self.tag}{host}"  # fx<pid>zk, fx<pid>b1: at most 15 characters
            _ip("link", "add", outer, "type", "veth", "peer", "name", "eth0", "netns", ns)
            self.root_links.append(outer)
            _ip("link", "set", outer, "master", self.bridge)
            _ip("link", "set", outer, "up")
            _ip("-n", ns, "addr", "add", f"{self.ips[host]}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", "eth0", "up")

    def _let_the_bridge_forward(self) -> None:
        """With br_netfilter loaded, frames between two ports of a bridge pass iptables' FORWARD chain,
        and a Docker engine on the machine sets that chain's policy to DROP: the brokers could not
        reach ZooKeeper. Accept this bridge's own traffic for the test's lifetime."""
        nf = Path("/proc/sys/net/bridge/bridge-nf-call-iptables")
        if not nf.exists() or nf.read_text().strip() != "1" or shutil.which("iptables") is None:
            return
        rule = ["FORWARD", "-i", self.bridge, "-o", self.bridge, "-j", "ACCEPT"]
        subprocess.run(["iptables", "-I", *rule], capture_output=True, text=True, timeout=15, check=True)
        self.forward_rule = rule

    def set_link(self, host: str, up: bool) -> None:
        _ip("-n", self.namespaces[host], "link", "set", "eth0", "up" if up else "down")

    # --- the processes ---

    def _exec(self, host: str, argv: list[str], out: Path, **kwargs) -> subprocess.Popen:
        # `ip netns exec` execs the command in place: the Popen's pid is java's / python's own.
        with open(out, "ab") as log:
            process = subprocess.Popen(["ip", "netns", "exec", self.namespaces[host], *argv], stdout=log,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO, **kwargs)
        self.processes.append(process)
        return process

    def start_zookeeper(self) -> None:
        zk_dir = self.work_dir / "zookeeper"
        zk_dir.mkdir(parents=True, exist_ok=True)
        cfg = zk_dir / "zoo.cfg"
        cfg.write_text(zookeeper.zoo_cfg(zk_dir / "data", ZK_PORT, self.ips["zk"]))
        process = self._exec("zk", ["java", "-Xmx256m", "-cp", zookeeper.CLASSPATH, f"-Dzookeeper.log.dir={zk_dir}",
                                    "-Dzookeeper.root.logger=INFO,CONSOLE", zookeeper.MAIN, str(cfg)],
                             zk_dir / "zookeeper.log", env={**os.environ, "ZOO_LOG_DIR": str(zk_dir)})
        zookeeper.wait_serving(self.ips["zk"], ZK_PORT, 30, process)  # routed: the bridge has an address

    def start_broker(self, broker_id: int) -> None:
        host = f"b{broker_id}"
        props = {
            "broker.id": str(broker_id),
            "listeners": f"PLAINTEXT://{self.ips[host]}:{KAFKA_PORT}",
            "zookeeper.connect": f"{self.ips['zk']}:{ZK_PORT}{self.chroot}",
            "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "log.dirs": str(self.work_dir / f"data-{broker_id}"),
            "log.file": str(self.work_dir / f"broker-{broker_id}.log"),
            "audit.log.file": str(self.work_dir / f"audit-{broker_id}.log"),
        }
        config = self.work_dir / f"broker-{broker_id}.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.brokers[broker_id] = self._exec(host, [sys.executable, "-m", "fauxka", "broker", "--config", str(config)],
                                             self.work_dir / f"broker-{broker_id}.out")

    def address(self, broker_id: int) -> tuple[str, int]:
        return (self.ips[f"b{broker_id}"], KAFKA_PORT)

    def wait_ready(self, ids: list[int], timeout_s: float = 30) -> probe.ClusterView:
        return asyncio.run(probe.wait_ready([self.address(i) for i in ids], ids, timeout_s))

    def metadata(self, broker_id: int) -> probe.ClusterView:
        return asyncio.run(probe.metadata(*self.address(broker_id), 3.0))

    @property
    def zk_connect(self) -> str:
        return f"{self.ips['zk']}:{ZK_PORT}{self.chroot}"

    # --- teardown ---

    @staticmethod
    def _stop(processes: list[subprocess.Popen]) -> None:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    pass

    def close(self) -> None:
        # Brokers first, while ZooKeeper still serves their clean shutdown; ZooKeeper after.
        brokers = list(self.brokers.values())
        self._stop(brokers)
        self._stop([p for p in self.processes if p not in brokers])
        if self.forward_rule is not None:
            subprocess.run(["iptables", "-D", *self.forward_rule], capture_output=True, timeout=15, check=False)
        for ns in self.namespaces.values():  # takes its end of each veth pair, so the pair, with it
            _ip("netns", "del", ns, check=False)
        for link in self.root_links:
            if _ip("link", "show", link, check=False).returncode == 0:
                _ip("link", "del", link, check=False)


@pytest.fixture
def netns_cluster(tmp_path):
    if shutil.which("ip") is None:
        pytest.skip("`ip` (iproute2) not found")
    if shutil.which("java") is None or not zookeeper.ZOOKEEPER_JAR.exists():
        pytest.skip("java / Debian's zookeeper package not installed")
    cluster = NetnsCluster(tmp_path)
    try:
        cluster.build_network()
        cluster.start_zookeeper()
        for broker_id in BROKERS:
            cluster.start_broker(broker_id)
        cluster.wait_ready(list(BROKERS), 45)
        yield cluster
    finally:
        cluster.close()


def test_a_cut_link_expires_the_broker_and_it_registers_again(netns_cluster):
    cluster = netns_cluster
    zk = ZkWatcher(cluster.zk_connect)  # from the root namespace, whose link is never cut
    try:
        assert sorted(zk.children("/brokers/ids")) == ["1", "2", "3"]
        first_owner = zk.stat("/brokers/ids/2").ephemeral_owner

        cluster.set_link("b2", up=False)
        cut = time.monotonic()
        wait_for(lambda: not zk.exists("/brokers/ids/2"), SESSION_S + 5, 0.02,
                 what="/brokers/ids/2 gone after its link went down")
        gone_s = time.monotonic() - cut
        # The rest of the cluster sees it too: the others' Metadata drops broker 2.
        for broker_id in (1, 3):
            wait_for(lambda: cluster.metadata(broker_id).brokers == [1, 3], 10,
                     what=f"broker {broker_id}'s Metadata without broker 2")
        assert cluster.brokers[2].poll() is None, "broker 2 died while cut off"

        cluster.set_link("b2", up=True)
        restored = time.monotonic()
        wait_for(lambda: zk.exists("/brokers/ids/2"), SESSION_S + 10, 0.02,
                 what="/brokers/ids/2 back after its link came up")
        back_s = time.monotonic() - restored
        assert zk.stat("/brokers/ids/2").ephemeral_owner != first_owner, "re-registered under the expired session?"
        view = cluster.wait_ready(list(BROKERS), SESSION_S + 10)
        converged_s = time.monotonic() - restored
        print(f"\nnetns: link down -> /brokers/ids/2 gone in {gone_s:.2f}s; "
              f"link up -> back in {back_s:.2f}s; all Metadata converged in {converged_s:.2f}s "
              f"(session {SESSION_S:.0f}s, controller {view.controller_id})")
        assert gone_s >= SESSION_S * 0.5, f"node gone after {gone_s:.2f}s: sooner than a session expiry can be"
    finally:
        zk.close()
