"""Real processes for the tests: a ZooKeeper server and broker processes.

Every cluster lives under its own ZooKeeper chroot, so one ZooKeeper serves
the shared cluster and every disruptive test's private one.
"""

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import structlog

from fauxka import probe, zookeeper
from fauxka.ports import free_ports
from fauxka.testing.cluster import wait_for as testing_wait_for
from fauxka.zkstore import ZkStore

SESSION_TIMEOUT_MS = 2000
_chroots = itertools.count(1)


class ZooKeeperServer:
    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        self.port = free_ports()
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = zookeeper.start(self.data_dir, self.port)
        zookeeper.wait_serving("127.0.0.1", self.port, 30, self.process)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)

    @property
    def connect(self) -> str:
        return f"127.0.0.1:{self.port}"


class BrokerProcess:
    def __init__(self, broker_id: int, zk_connect: str, work_dir: Path, overrides: dict[str, str],
                 extra_listeners: dict[str, str] | None = None):
        """`extra_listeners`: listener name -> security protocol, bound next to PLAINTEXT (which stays
        the inter-broker listener and the one `address` names)."""
        self.broker_id = broker_id
        self.port = free_ports()
        self.listener_ports = {name: free_ports() for name in extra_listeners or {}}
        self.metrics_port = free_ports()
        self.work_dir = work_dir
        self.config = work_dir / f"broker-{broker_id}.properties"
        self.log_file = work_dir / f"broker-{broker_id}.log"
        self.out_file = work_dir / f"broker-{broker_id}.out"
        self.audit_file = work_dir / f"audit-{broker_id}.log"
        props = {
            "broker.id": str(broker_id),
            "listeners": ",".join([f"PLAINTEXT://127.0.0.1:{self.port}",
                                   *(f"{name}://127.0.0.1:{port}" for name, port in self.listener_ports.items())]),
            **({"listener.security.protocol.map": ",".join(
                ["PLAINTEXT:PLAINTEXT", *(f"{n}:{p}" for n, p in extra_listeners.items())])} if extra_listeners else {}),
            "zookeeper.connect": zk_connect,
            "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            # the last broker of a cluster stopped in turn cannot hand its leaderships to anyone:
            # Kafka's 5 s between its controlled shutdown attempts would add ~10 s to every teardown
            "controlled.shutdown.retry.backoff.ms": "100",
            # as Kafka's own tests and testcontainers: no 3 s wait before a new group's first rebalance
            "group.initial.rebalance.delay.ms": "0",
            "log.dirs": str(work_dir / f"data-{broker_id}"),
            "log.file": str(self.log_file),
            "metrics.port": str(self.metrics_port),
            "audit.log.file": str(self.audit_file),
            **overrides,
        }
        self.config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        out = open(self.out_file, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "fauxka", "broker", "--config", str(self.config)],
                                        stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def signal(self, sig: int) -> None:
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, sig)

    def stop(self, timeout_s: float = 10) -> None:
        if self.process is None:
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)

    @property
    def address(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)


class Cluster:
    def __init__(self, zk: ZooKeeperServer, work_dir: Path, size: int = 3, overrides: dict[str, str] | None = None,
                 extra_listeners: dict[str, str] | None = None):
        self.zk = zk
        self.chroot = f"/fauxka-test-{os.getpid()}-{next(_chroots)}"
        self.zk_connect = zk.connect + self.chroot
        work_dir.mkdir(parents=True, exist_ok=True)
        self.brokers = {i: BrokerProcess(i, self.zk_connect, work_dir, overrides or {}, extra_listeners)
                        for i in range(1, size + 1)}

    def start(self, timeout_s: float = 30) -> probe.ClusterView:
        """Start every broker and wait until the cluster is ready; a start that fails (a broker
        exits, the deadline passes) stops the brokers it started, so none outlives its fixture."""
        for broker in self.brokers.values():
            broker.start()
        try:
            return self.wait_ready(timeout_s)
        except BaseException:
            for broker in self.brokers.values():
                broker.stop()
            raise

    def wait_ready(self, timeout_s: float = 30, ids: list[int] | None = None) -> probe.ClusterView:
        ids = ids or list(self.brokers)
        addresses = [self.brokers[i].address for i in ids]

        def none_exited():
            for i in ids:
                broker = self.brokers[i]
                if broker.process is not None and broker.process.poll() is not None:
                    lines = broker.out_file.read_text(errors="replace").strip().splitlines()
                    raise RuntimeError(f"broker {i} exited with {broker.process.returncode}: {lines[-3:]}")

        return asyncio.run(probe.wait_ready(addresses, ids, timeout_s, none_exited))

    def stop(self) -> None:
        for broker in self.brokers.values():
            broker.stop()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{h}:{p}" for h, p in (b.address for b in self.brokers.values()))

    def controller_id(self) -> int:
        """The active controller, from ZooKeeper (Metadata may advertise another: advertised.controller)."""
        data = self.zk_get("/controller")
        return json.loads(data)["brokerid"] if data else -1

    def address_of(self, broker_id: int) -> str:
        host, port = self.brokers[broker_id].address
        return f"{host}:{port}"

    def listener_address(self, broker_id: int, listener: str) -> str:
        """host:port of one of the broker's extra listeners."""
        return f"127.0.0.1:{self.brokers[broker_id].listener_ports[listener]}"

    def listener_bootstrap(self, listener: str) -> str:
        return ",".join(self.listener_address(i, listener) for i in self.brokers)

    def controller_address(self) -> str:
        """host:port of the active controller (admin writes go there until forwarding exists)."""
        return self.address_of(self.controller_id())

    def non_controller_address(self) -> str:
        controller = self.controller_id()
        return self.address_of(next(i for i in self.brokers if i != controller))

    def audit_events(self) -> list[dict]:
        """Every audit line written by any broker of this cluster (the controller writes them)."""
        events = []
        for broker in self.brokers.values():
            if broker.audit_file.exists():
                events += [json.loads(line) for line in broker.audit_file.read_text().splitlines() if line]
        return sorted(events, key=lambda e: e["ts"])

    def metadata(self, broker_id: int) -> probe.ClusterView:
        return asyncio.run(probe.metadata(*self.brokers[broker_id].address, 5.0))

    def zk_get(self, path: str) -> bytes | None:
        """Read a znode of this cluster (inside its chroot) through zkstore."""
        async def read():
            store = ZkStore(self.zk_connect, 10000, structlog.get_logger())
            await store.start(10)
            try:
                got = await store.get(path)
                return got[0] if got else None
            finally:
                await store.stop()
        return asyncio.run(read())


def wait_for(predicate, timeout_s: float, interval_s: float = 0.05, what: str = "condition"):
    """Poll `predicate` until it returns a truthy value; the value, or AssertionError at the deadline."""
    try:
        return testing_wait_for(predicate, timeout_s, interval_s, what)
    except TimeoutError as exc:
        raise AssertionError(str(exc)) from None
