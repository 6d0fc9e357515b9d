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

from fauxka import launcher, processes, trace
from fauxka.pids import alive
from fauxka.faults import FaultClient, make_fault
from fauxka.ports import free_ports
from fauxka.model.faults import Fault, decode_obeyed
from fauxka.zkstore.paths import fault_path, faults_seen_path

_topics = itertools.count(1)


def _paused(pid: int | None) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"
    except (OSError, IndexError):
        return False


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
    is already running (each Cluster takes its own chroot); without it, one is started for it.
    `starter` (a fauxka.starter.Starter, started ahead) forks the brokers without their import:
    the pytest fixtures share one for the session."""

    def __init__(self, brokers: int = 3, *, zookeeper: str | None = None, data_dir: str | Path | None = None,
                 overrides: dict[str, str] | None = None, timeout_s: float = 60.0, starter=None):
        self.size = brokers
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="fauxka-"))
        self._zookeeper = zookeeper
        self.overrides = {"zookeeper.session.timeout.ms": "6000", **(overrides or {})}
        self.timeout_s = timeout_s
        self.zk_connect: str | None = None
        self._faults: FaultClient | None = None
        self._zookeeper_stopped = False  # by stop_zookeeper()
        self.base_port = 0
        self.starter = starter
        self._attached = False
        self._bootstrap: str | None = None

    @classmethod
    def attach(cls, data_dir: str | Path | None = None, *, bootstrap: str | None = None,
               zookeeper: str | None = None, timeout_s: float = 10.0) -> "Cluster":
        """A running cluster this Cluster did not start: one `fauxka up` started in data_dir (all of
        its faults, process ones included), or any fauxka cluster by its bootstrap servers and
        ZooKeeper (the fault kit's faults only). stop() only lets go of it. OSError/TimeoutError
        when there is nothing to attach to."""
        cluster = cls(0, data_dir=data_dir or "/nonexistent/fauxka-attached", timeout_s=timeout_s)
        cluster._own_dir, cluster._attached = False, True
        if data_dir is not None and bootstrap is None:
            state = launcher._read_state(Path(data_dir).resolve())
            if state is None:
                raise OSError(f"no cluster state in {data_dir} (start one with fauxka up)")
            cluster.size = len(state["brokers"])
            cluster.zk_connect = zookeeper or state["zookeeper_connect"]
            cluster._bootstrap = ",".join(f"127.0.0.1:{b['port']}" for b in state["brokers"])
            cluster.base_port = state["brokers"][0]["port"] - state["brokers"][0]["id"] + 1
        else:
            if not (bootstrap and zookeeper):
                raise OSError("give the cluster's bootstrap servers and ZooKeeper together")
            cluster.zk_connect, cluster._bootstrap = zookeeper, bootstrap
        cluster._faults = FaultClient(cluster.zk_connect, timeout_s=timeout_s)
        if data_dir is None or bootstrap is not None:
            cluster.size = len(cluster._faults.brokers())
        return cluster

    # --- life ------------------------------------------------------------------

    def start(self) -> "Cluster":
        zk_port = 0
        if self._zookeeper is None:  # up starts one (stopped with the cluster; restart_zookeeper())
            zk_port = free_ports()
            self.zk_connect = f"127.0.0.1:{zk_port}"
        else:
            self.zk_connect = f"{self._zookeeper}/fauxka-{uuid.uuid4().hex[:12]}"
        self.base_port = free_ports(self.size)
        options = launcher.UpOptions(
            brokers=self.size, zookeeper=self._zookeeper and self.zk_connect, zookeeper_port=zk_port,
            data_dir=self.data_dir, base_port=self.base_port, metrics_base_port=0,
            overrides=tuple(f"{k}={v}" for k, v in self.overrides.items()), detach=True, timeout_s=self.timeout_s,
            starter=self.starter)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = launcher.up(options)
        if code != 0:
            raise RuntimeError(f"the cluster did not start: {out.getvalue().strip()[-500:]} (logs in {self.data_dir})")
        self._faults = FaultClient(self.zk_connect)
        return self

    def stop(self) -> None:
        if self._faults is not None:
            self._faults.close()
            self._faults = None
        if self._attached:
            return
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            # the brokers and a ZooKeeper of its own, killed: nothing outlives a test's cluster
            # (FAUXKA_KEEP_DATA: stopped as `fauxka down` stops them, their files kept for a look)
            launcher.down(self.data_dir, discard=not os.environ.get("FAUXKA_KEEP_DATA"))
        if self._own_dir and not os.environ.get("FAUXKA_KEEP_DATA"):
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def broker_ids(self) -> list[int]:
        if self._attached and self.base_port == 0:  # attached by bootstrap: the registered ones
            return sorted(self.registered())
        return list(range(1, self.size + 1))

    @property
    def bootstrap(self) -> str:
        return self._bootstrap or ",".join(self.address(i) for i in self.broker_ids)

    def address(self, broker_id: int) -> str:
        return f"127.0.0.1:{self.base_port + broker_id - 1}"

    def unique_topic(self, prefix: str = "t") -> str:
        """A topic name no other test of this session uses (isolation on a shared cluster)."""
        return f"{prefix}-{os.getpid()}-{next(_topics)}-{uuid.uuid4().hex[:6]}"

    # --- faults ----------------------------------------------------------------

    @property
    def faults(self) -> FaultClient:
        if self._faults is None:
            raise RuntimeError("the cluster is not started" if not self._zookeeper_stopped else
                               "the cluster's ZooKeeper is stopped (start_zookeeper() starts it again)")
        return self._faults

    def add_fault(self, kind: str, **scope_and_action) -> Fault:
        """Add a fault (fauxka.faults.make_fault's arguments); returns once every running broker
        obeys it (a watch notification: a few ms, more under load) or it is gone (used up)."""
        fault = self.faults.add(make_fault(kind, **scope_and_action))
        self._wait_obeyed(lambda seen: fault.id in seen["faults"] or self.faults.get(fault_path(fault.id)) is None)
        return fault

    @contextlib.contextmanager
    def fault(self, kind: str, **scope_and_action):
        """The fault while the block runs; removed when it ends, however it ends."""
        fault = self.add_fault(kind, **scope_and_action)
        try:
            yield fault
        finally:
            self.remove_fault(fault.id)

    def remove_fault(self, fault_id: str) -> bool:
        """Remove it; returns once no running broker obeys it any more."""
        removed = self.faults.remove(fault_id)
        self._wait_obeyed(lambda seen: fault_id not in seen["faults"])
        return removed

    def list_faults(self) -> list[Fault]:
        return self.faults.list()

    def clear_faults(self) -> int:
        cleared = self.faults.clear()
        self._wait_obeyed(lambda seen: not seen["faults"])
        return cleared

    def _wait_obeyed(self, check, timeout_s: float = 5.0) -> None:
        """Until what each running broker obeys (its FAULTS_SEEN node) passes `check`. Best effort:
        a broker cut off from ZooKeeper cannot say, so at the deadline this returns anyway."""
        def obeyed():
            for broker_id in self._running():
                data = self.faults.get(faults_seen_path(broker_id))
                if data is None or not check(decode_obeyed(data)):
                    return False
            return True
        with contextlib.suppress(TimeoutError):
            wait_for(obeyed, timeout_s, interval_s=0.005, what="every broker obeying the faults")

    def _running(self) -> list[int]:
        """Registered brokers whose process is not stopped (fauxka pause): those that can answer."""
        state = launcher._read_state(self.data_dir.resolve()) or {}
        pids = {b["id"]: b.get("pid") for b in state.get("brokers", [])}
        return [b for b in self.registered() if not _paused(pids.get(b))]

    # --- the request trace -------------------------------------------------------

    @contextlib.contextmanager
    def tracing(self):
        """Every broker records the requests it answers while the block runs (Cluster.trace reads them)."""
        self.faults.set_tracing(True)
        self._wait_obeyed(lambda seen: seen["tracing"])
        try:
            yield self
        finally:
            self.faults.set_tracing(False)
            self._wait_obeyed(lambda seen: not seen["tracing"])

    def trace(self, **filters) -> list[dict]:
        """The traced requests, oldest first: dicts with ts, broker, api, api_key, version, client_id,
        principal, correlation_id, partitions, errors, responded, fault, latency_ms; filters: broker,
        api (e.g. "produce"), client_id, principal, fault."""
        return trace.read(self.data_dir, **filters)

    # --- processes ---------------------------------------------------------------

    @property
    def has_processes(self) -> bool:
        """Whether its processes can be killed, paused, restarted (a cluster started through
        `fauxka up`'s code, which keeps cluster.json)."""
        return launcher._read_state(self.data_dir.resolve()) is not None

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
        processes.act(self.data_dir, "restart", broker_id, timeout_s, self.starter)
        wait_for(lambda: broker_id in self.registered(), timeout_s, what=f"broker {broker_id} registered")

    def stop_zookeeper(self, kill: bool = False) -> None:
        """Stop the cluster's own ZooKeeper (a Cluster made without `zookeeper=`): the brokers keep
        serving what needs no ZooKeeper (produce, fetch, groups); metadata changes wait for it.
        This Cluster's own look-ups and faults, which need ZooKeeper, raise at once until
        start_zookeeper(): its client closes first and opens again once ZooKeeper serves. Left
        reconnecting, it could connect while ZooKeeper starts, before its database is loaded, and
        ZooKeeper 3.8.0 then leaves that connection open unanswered (its close fails on the
        missing database), so the client waited a whole session timeout and its session expired."""
        if self._faults is not None:
            self._faults.close()
            self._faults = None
        self._zookeeper_stopped = True
        try:
            processes.act(self.data_dir, "kill" if kill else "terminate", processes.ZOOKEEPER, self.timeout_s)
        except BaseException:
            self._reopen_faults()
            raise

    def start_zookeeper(self) -> None:
        """Start it again on its port and data: the brokers' sessions survive a stop shorter than
        zookeeper.session.timeout.ms (ZooKeeper restores them), longer ones expire and the brokers
        register again (as does a broker whose reconnect meets ZooKeeper's start, see above)."""
        processes.act(self.data_dir, "restart", processes.ZOOKEEPER, self.timeout_s)
        self._reopen_faults()

    def _reopen_faults(self) -> None:
        if self._faults is None:
            self._faults = FaultClient(self.zk_connect)
        self._zookeeper_stopped = False

    def restart_zookeeper(self) -> None:
        self.stop_zookeeper()
        self.start_zookeeper()

    # --- look-ups ----------------------------------------------------------------

    def alive(self, broker_id: int) -> bool:
        """Whether the broker's process runs (a paused one included)."""
        state = launcher._read_state(self.data_dir.resolve()) or {}
        return any(b["id"] == broker_id and b.get("pid") and not b.get("stopped") and alive(b["pid"])
                   for b in state.get("brokers", []))

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

    def replicas(self, topic: str, partition: int) -> list[int]:
        """The partition's assigned replicas (its topic's znode), [] for no such partition."""
        data = self.faults.get(f"/brokers/topics/{topic}")
        return json.loads(data)["partitions"].get(str(partition), []) if data else []

    def partitions(self, topic: str) -> list[int]:
        return sorted(int(p) for p in self.faults.children(f"/brokers/topics/{topic}/partitions"))

    def _offsets_partition(self, group_id: str) -> int:
        from fauxka.coordinator.partitioner import partition_for

        return partition_for(group_id, int(self.overrides.get("offsets.topic.num.partitions", 50)))

    def coordinator(self, group_id: str) -> int:
        """The group's coordinator: the leader of its __consumer_offsets partition (Kafka's
        partitionFor); -1 before the topic exists (the first FindCoordinator creates it)."""
        return self.leader("__consumer_offsets", self._offsets_partition(group_id))

    def move_coordinator(self, group_id: str, broker_id: int, timeout_s: float = 10.0) -> None:
        """Make `broker_id` the group's coordinator: it leads the group's __consumer_offsets
        partition (an in-sync replica of it), so the group's members are told NOT_COORDINATOR."""
        self.move_leader("__consumer_offsets", self._offsets_partition(group_id), broker_id, timeout_s)

    def _txn_partition(self, transactional_id: str) -> int:
        from fauxka.coordinator.partitioner import partition_for

        return partition_for(transactional_id, int(self.overrides.get("transaction.state.log.num.partitions", 50)))

    def transaction_coordinator(self, transactional_id: str) -> int:
        """The transactional id's coordinator: the leader of its __transaction_state partition
        (Kafka's TransactionStateManager.partitionFor); -1 before the topic exists (the first
        FindCoordinator or InitProducerId with a transactional id creates it)."""
        return self.leader("__transaction_state", self._txn_partition(transactional_id))

    def move_transaction_coordinator(self, transactional_id: str, broker_id: int, timeout_s: float = 10.0) -> None:
        """Make `broker_id` the transaction's coordinator: it leads the id's __transaction_state
        partition (an in-sync replica of it) and loads the transaction from it, so the producer
        is told NOT_COORDINATOR by the old one and carries on with the new one."""
        self.move_leader("__transaction_state", self._txn_partition(transactional_id), broker_id, timeout_s)

    def shuffle_leaders(self, topic: str, timeout_s: float = 10.0) -> dict[int, int]:
        """Move every partition of `topic` whose ISR has another member to one of them (kfake's
        ShufflePartitionLeaders, per topic); the new leaders by partition."""
        import random

        moved, faults = {}, []
        for p in self.partitions(topic):
            others = [b for b in self.isr(topic, p) if b != self.leader(topic, p)]
            if others:
                moved[p] = random.choice(others)
                faults.append(self.add_fault("leader", topic=topic, partition=p, broker=moved[p]))
        self.wait_for(lambda: all(self.leader(topic, p) == b for p, b in moved.items()) and self._carried_out(faults),
                      timeout_s, what=f"the leaders of {topic} moved")
        return moved

    def isr(self, topic: str, partition: int) -> list[int]:
        state = self.partition_state(topic, partition)
        return state["isr"] if state else []

    def wait_for(self, predicate, timeout_s: float = 10.0, what: str = "condition"):
        return wait_for(predicate, timeout_s, what=what)

    def move_leader(self, topic: str, partition: int, broker_id: int, timeout_s: float = 10.0) -> None:
        """Make `broker_id` (an in-sync replica) lead the partition, through the controller's
        partition leadership (a `leader` fault); TimeoutError when it does not within timeout_s."""
        fault = self.add_fault("leader", topic=topic, partition=partition, broker=broker_id)
        self.wait_for(lambda: self.leader(topic, partition) == broker_id and self._carried_out([fault]), timeout_s,
                      what=f"broker {broker_id} leading {topic}-{partition}")

    def _carried_out(self, faults: list[Fault]) -> bool:
        """Whether the controller has removed these `leader` faults (it does once it has acted)."""
        return all(self.faults.get(fault_path(f.id)) is None for f in faults)
