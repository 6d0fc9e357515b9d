"""fauxka.testing.Cluster: start/stop a local cluster through `fauxka up --detach`'s code, inject
faults (fauxka/faults.py) as context managers, kill/pause/restart brokers (fauxka/processes.py),
look up controllers and leaders in ZooKeeper, and wait with deadlines."""

import contextlib
import io
import itertools
import json
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

from fauxka import launcher, processes, trace, zookeeper
from fauxka.faults import FaultClient, make_fault
from fauxka.ports import free_ports
from model.faults import Fault

_topics = itertools.count(1)


def wait_for(predicate, timeout_s: float = 10.0, interval_s: float = 0.05, what: str = "condition"):
    """Poll `predicate` until it returns something truthy, and return it; TimeoutError naming
    `what` and the last value (or exception) at the deadline."""
    deadline = time.monotonic() + timeout_s
    last = None
    while True:
        try:
            last = predicate()
            if last:
                return last
        except Exception as exc:  # what is polled may be down right now
            last = exc
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} not reached within {timeout_s}s (last: {last!r})")
        time.sleep(interval_s)


class Cluster:
    """A cluster of `brokers` broker processes. `zookeeper` ("host:port") shares a ZooKeeper that
    is already running (each Cluster takes its own chroot); without it, one is started for it."""

    def __init__(self, brokers: int = 3, *, zookeeper: str | None = None, data_dir: str | Path | None = None,
                 overrides: dict[str, str] | None = None, timeout_s: float = 60.0):
        self.size = brokers
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="fauxka-"))
        self._zookeeper = zookeeper
        self.overrides = {"zookeeper.session.timeout.ms": "6000", **(overrides or {})}
        self.timeout_s = timeout_s
        self.zk_connect: str | None = None
        self._faults: FaultClient | None = None
        self._zk_process = None
        self.base_port = 0

    # --- life ------------------------------------------------------------------

    def start(self) -> "Cluster":
        if self._zookeeper is None:  # our own ZooKeeper, stopped with the cluster
            port = free_ports()
            self._zk_process = zookeeper.start(self.data_dir / "zookeeper", port)
            zookeeper.wait_serving("127.0.0.1", port, self.timeout_s, self._zk_process)
            self._zookeeper = f"127.0.0.1:{port}"
        self.zk_connect = f"{self._zookeeper}/fauxka-{uuid.uuid4().hex[:12]}"
        self.base_port = free_ports(self.size)
        options = launcher.UpOptions(
            brokers=self.size, zookeeper=self.zk_connect, data_dir=self.data_dir, base_port=self.base_port,
            metrics_base_port=0, overrides=tuple(f"{k}={v}" for k, v in self.overrides.items()),
            detach=True, timeout_s=self.timeout_s)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = launcher.up(options)
        if code != 0:
            self._stop_zookeeper()
            raise RuntimeError(f"the cluster did not start: {out.getvalue().strip()[-500:]} (logs in {self.data_dir})")
        self._faults = FaultClient(self.zk_connect)
        return self

    def stop(self) -> None:
        if self._faults is not None:
            self._faults.close()
            self._faults = None
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            launcher.down(self.data_dir)
        self._stop_zookeeper()
        if self._own_dir and not os.environ.get("FAUXKA_KEEP_DATA"):
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def _stop_zookeeper(self) -> None:
        if self._zk_process is not None and self._zk_process.poll() is None:
            self._zk_process.terminate()
            self._zk_process.wait(10)

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def broker_ids(self) -> list[int]:
        return list(range(1, self.size + 1))

    @property
    def bootstrap(self) -> str:
        return ",".join(self.address(i) for i in self.broker_ids)

    def address(self, broker_id: int) -> str:
        return f"127.0.0.1:{self.base_port + broker_id - 1}"

    def unique_topic(self, prefix: str = "t") -> str:
        """A topic name no other test of this session uses (isolation on a shared cluster)."""
        return f"{prefix}-{os.getpid()}-{next(_topics)}-{uuid.uuid4().hex[:6]}"

    # --- faults ----------------------------------------------------------------

    @property
    def faults(self) -> FaultClient:
        if self._faults is None:
            raise RuntimeError("the cluster is not started")
        return self._faults

    def add_fault(self, kind: str, **scope_and_action) -> Fault:
        """Add a fault (fauxka.faults.make_fault's arguments); every running broker obeys it when
        this returns."""
        return self.faults.add(make_fault(kind, **scope_and_action))

    @contextlib.contextmanager
    def fault(self, kind: str, **scope_and_action):
        """The fault while the block runs; removed when it ends, however it ends."""
        fault = self.add_fault(kind, **scope_and_action)
        try:
            yield fault
        finally:
            self.faults.remove(fault.id)

    def remove_fault(self, fault_id: str) -> bool:
        return self.faults.remove(fault_id)

    def list_faults(self) -> list[Fault]:
        return self.faults.list()

    def clear_faults(self) -> int:
        return self.faults.clear()

    # --- the request trace -------------------------------------------------------

    @contextlib.contextmanager
    def tracing(self):
        """Every broker records the requests it answers while the block runs (Cluster.trace reads them)."""
        self.faults.set_tracing(True)  # returns once every running broker records
        try:
            yield self
        finally:
            self.faults.set_tracing(False)

    def trace(self, **filters) -> list[dict]:
        """The traced requests, oldest first: dicts with ts, broker, api, api_key, version, client_id,
        principal, correlation_id, partitions, errors, responded, fault, latency_ms; filters: broker,
        api (e.g. "produce"), client_id, principal, fault."""
        return trace.read(self.data_dir, **filters)

    # --- processes ---------------------------------------------------------------

    def kill(self, broker_id: int) -> None:
        processes.act(self.data_dir, "kill", broker_id)

    def terminate(self, broker_id: int) -> None:
        processes.act(self.data_dir, "terminate", broker_id)

    def pause(self, broker_id: int) -> None:
        processes.act(self.data_dir, "pause", broker_id)

    def resume(self, broker_id: int) -> None:
        processes.act(self.data_dir, "resume", broker_id)

    def restart(self, broker_id: int, timeout_s: float = 30.0) -> None:
        """Stop (SIGTERM, or nothing if it is down) and start the broker again; returns once it is registered."""
        processes.act(self.data_dir, "restart", broker_id, timeout_s)
        wait_for(lambda: broker_id in self.registered(), timeout_s, what=f"broker {broker_id} registered")

    # --- look-ups ----------------------------------------------------------------

    def registered(self) -> set[int]:
        return self.faults.brokers()

    def controller(self) -> int:
        """The active controller's id, -1 while there is none."""
        data = self.faults.get("/controller")
        return json.loads(data)["brokerid"] if data else -1

    def partition_state(self, topic: str, partition: int) -> dict | None:
        data = self.faults.get(f"/brokers/topics/{topic}/partitions/{partition}/state")
        return json.loads(data) if data else None

    def leader(self, topic: str, partition: int) -> int:
        """The partition's leader as the controller wrote it (-1: none or no such partition)."""
        state = self.partition_state(topic, partition)
        return state["leader"] if state else -1

    def partitions(self, topic: str) -> list[int]:
        return sorted(int(p) for p in self.faults.children(f"/brokers/topics/{topic}/partitions"))

    def _offsets_partition(self, group_id: str) -> int:
        from coordinator.group.partitioner import partition_for

        return partition_for(group_id, int(self.overrides.get("offsets.topic.num.partitions", 50)))

    def coordinator(self, group_id: str) -> int:
        """The group's coordinator: the leader of its __consumer_offsets partition (Kafka's
        partitionFor); -1 before the topic exists (the first FindCoordinator creates it)."""
        return self.leader("__consumer_offsets", self._offsets_partition(group_id))

    def move_coordinator(self, group_id: str, broker_id: int, timeout_s: float = 10.0) -> None:
        """Make `broker_id` the group's coordinator: it leads the group's __consumer_offsets
        partition (an in-sync replica of it), so the group's members are told NOT_COORDINATOR."""
        self.move_leader("__consumer_offsets", self._offsets_partition(group_id), broker_id, timeout_s)

    def shuffle_leaders(self, topic: str, timeout_s: float = 10.0) -> dict[int, int]:
        """Move every partition of `topic` whose ISR has another member to one of them (kfake's
        ShufflePartitionLeaders, per topic); the new leaders by partition."""
        import random

        moved = {}
        for p in self.partitions(topic):
            others = [b for b in self.isr(topic, p) if b != self.leader(topic, p)]
            if others:
                moved[p] = random.choice(others)
                self.add_fault("leader", topic=topic, partition=p, broker=moved[p])
        self.wait_for(lambda: all(self.leader(topic, p) == b for p, b in moved.items()), timeout_s,
                      what=f"the leaders of {topic} moved")
        return moved

    def isr(self, topic: str, partition: int) -> list[int]:
        state = self.partition_state(topic, partition)
        return state["isr"] if state else []

    def wait_for(self, predicate, timeout_s: float = 10.0, what: str = "condition"):
        return wait_for(predicate, timeout_s, what=what)

    def move_leader(self, topic: str, partition: int, broker_id: int, timeout_s: float = 10.0) -> None:
        """Make `broker_id` (an in-sync replica) lead the partition, through the controller's
        partition leadership (a `leader` fault); TimeoutError when it does not within timeout_s."""
        self.add_fault("leader", topic=topic, partition=partition, broker=broker_id)
        self.wait_for(lambda: self.leader(topic, partition) == broker_id, timeout_s,
                      what=f"broker {broker_id} leading {topic}-{partition}")
