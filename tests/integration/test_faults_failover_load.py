"""The cluster under faults (issue 5): the controller is SIGKILLed under admin load.

48 client threads create and delete topics through fauxka's own client, half of them at the
controller, half at the other brokers (which forward); the controller is killed mid-way.
Clients retry a topic whose request failed, as real clients do, until it is settled.
"""

import json
import signal
import threading
import time

from tests.admin_helpers import create_topics, delete_topics, topic_spec, unique
from tests.integration.faults_support import ZkWatcher
from tests.harness import SESSION_TIMEOUT_MS, wait_for

SESSION_S = SESSION_TIMEOUT_MS / 1000
CLIENTS = 48
TIMEOUT_MS = 5000  # the CreateTopics / DeleteTopics timeout
MARGIN_S = 5.0  # how much longer than its timeouts any request may take
NONE, REQUEST_TIMED_OUT, NOT_CONTROLLER, TOPIC_ALREADY_EXISTS, UNKNOWN_TOPIC = 0, 7, 41, 36, 3
RETRIABLE = {NOT_CONTROLLER, REQUEST_TIMED_OUT}


class Load:
    def __init__(self, cluster, zk: ZkWatcher, killed: int):
        self.cluster, self.zk, self.killed = cluster, zk, killed
        self.others = [i for i in cluster.brokers if i != killed]
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.latencies: list[tuple[str, float]] = []
        self.codes: dict[int, int] = {}
        self.client_errors: list[str] = []  # no answer at all (connection refused/reset by the killed broker)
        self.created: set[str] = set()  # acknowledged (error 0)
        self.exists_on_retry: set[str] = set()  # TOPIC_ALREADY_EXISTS after an unsettled first attempt
        self.deleted: set[str] = set()
        self.unsettled: set[str] = set()  # no final answer when the load stopped: either outcome is fine
        self.unexpected: list[tuple[str, str, int]] = []

    def target(self, worker: int) -> str:
        if worker % 2:  # forwarding clients: always a broker that was not the controller
            return self.cluster.address_of(self.others[worker // 2 % len(self.others)])
        controller = self.zk.controller()
        return self.cluster.address_of(controller if controller > 0 else self.killed)

    def call(self, kind: str, address: str, fn):
        started = time.monotonic()
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - the killed broker's connections
            with self.lock:
                self.client_errors.append(f"{kind} at {address}: {type(exc).__name__}: {exc}")
            return None
        finally:
            with self.lock:
                self.latencies.append((kind, time.monotonic() - started))

    def settle(self, worker: int, kind: str, name: str) -> None:
        """One topic's create or delete, retried until it has a final answer."""
        attempts = 0
        while not self.stop.is_set() or attempts == 0:
            attempts += 1
            if attempts > 100:  # ~10 s of refused connections and NOT_CONTROLLER
                break
            address = self.target(worker)
            if kind == "create":
                got = self.call(kind, address, lambda: create_topics(address, [topic_spec(name, 2, 2)], timeout_ms=TIMEOUT_MS))
            else:
                got = self.call(kind, address, lambda: delete_topics(address, [name], timeout_ms=TIMEOUT_MS))
            if got is None:
                time.sleep(0.1)
                continue
            code = int(got[0].error_code)
            with self.lock:
                self.codes[code] = self.codes.get(code, 0) + 1
            if code in RETRIABLE:
                time.sleep(0.1)
                continue
            with self.lock:
                if code == NONE:
                    (self.created if kind == "create" else self.deleted).add(name)
                elif kind == "create" and code == TOPIC_ALREADY_EXISTS and (attempts > 1 or worker % 2):
                    # An earlier attempt was applied but its answer was lost with the killed
                    # controller: our retry, or the forwarding broker's own retry (as Kafka's
                    # ForwardingManager does after a disconnect), finds the topic. Checked below:
                    # the topic must exist.
                    self.exists_on_retry.add(name)
                elif kind == "delete" and code == UNKNOWN_TOPIC and (attempts > 1 or worker % 2):
                    self.deleted.add(name)  # the first attempt was applied
                else:
                    self.unexpected.append((kind, name, code))
            return
        with self.lock:  # given up without an answer: an earlier attempt may have been applied
            self.unsettled.add(name)

    def worker(self, worker: int) -> None:
        mine = 0
        while not self.stop.is_set():
            name = unique(f"load{worker}")
            self.settle(worker, "create", name)
            mine += 1
            if mine % 3 == 0 and name in self.created:
                self.settle(worker, "delete", name)


def test_controller_sigkill_under_concurrent_admin_load(make_cluster):
    cluster = make_cluster(3)
    zk = ZkWatcher(cluster.zk_connect)
    try:
        run(cluster, zk)
    finally:
        zk.close()


def run(cluster, zk: ZkWatcher) -> None:
    old = cluster.controller_id()
    epoch = int(zk.get("/controller_epoch"))
    load = Load(cluster, zk, old)
    threads = [threading.Thread(target=load.worker, args=(i,), daemon=True) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    time.sleep(2.0)
    cluster.brokers[old].signal(signal.SIGKILL)
    killed_at = time.monotonic()
    new = wait_for(lambda: (c := zk.controller()) not in (-1, old) and c, SESSION_S + 5, 0.01,
                   what="a new controller")
    elected_s = time.monotonic() - killed_at
    time.sleep(4.0)  # keep the load on the new controller for a while
    load.stop.set()
    for thread in threads:
        thread.join(60)
    assert not any(t.is_alive() for t in threads)

    assert int(zk.get("/controller_epoch")) == epoch + 1
    survivors = [i for i in cluster.brokers if i != old]
    slowest = max(s for _, s in load.latencies)
    report = (f"{len(load.latencies)} requests, answers {sorted(load.codes.items())}, "
              f"{len(load.client_errors)} without answer, {len(load.created)} created, "
              f"{len(load.deleted)} deleted, {len(load.unsettled)} unsettled, {len(load.exists_on_retry)} TOPIC_ALREADY_EXISTS on retry, "
              f"new controller {new} after {elapsed(elected_s)}, slowest request {elapsed(slowest)}")
    print(report)

    assert not load.unexpected, load.unexpected
    assert set(load.codes) <= {NONE, *RETRIABLE, TOPIC_ALREADY_EXISTS, UNKNOWN_TOPIC}, report
    # A forwarded request may first wait for the election (up to the session timeout), then
    # for its topics (the request's timeout).
    assert slowest < SESSION_S + TIMEOUT_MS / 1000 + MARGIN_S, report
    # Requests without any answer were all sent to the killed broker: cut by the SIGKILL, or
    # refused while ZooKeeper still named it controller (until its session expired).
    killed_address = cluster.address_of(old)
    assert all(f" at {killed_address}:" in e for e in load.client_errors), load.client_errors[:5]
    cut = [e for e in load.client_errors if "ConnectionRefused" not in e]
    assert len(cut) <= CLIENTS, cut[:5]

    # A deletion marked before the kill is finished by the new controller.
    wait_for(lambda: not zk.children("/admin/delete_topics"), 15, what="pending deletions finished")
    in_zk = set(zk.children("/brokers/topics"))
    # A TOPIC_ALREADY_EXISTS on retry means the first attempt was applied: the topic must exist.
    assert load.exists_on_retry - load.deleted <= in_zk
    assert len(load.exists_on_retry) <= CLIENTS  # only requests in flight at the kill
    expected = (load.created | load.exists_on_retry) - load.deleted - load.unsettled
    assert expected <= in_zk, sorted(expected - in_zk)[:10]
    assert not (load.deleted & in_zk), sorted(load.deleted & in_zk)[:10]
    assert len(load.unsettled) <= CLIENTS  # at most one per client, the one cut by the stop
    # No topic half-created: every partition of every topic has its state znode.
    for topic in in_zk:
        partitions = json.loads(zk.get(f"/brokers/topics/{topic}"))["partitions"]
        for p in partitions:
            assert zk.exists(f"/brokers/topics/{topic}/partitions/{p}/state"), (topic, p)
    for broker_id in survivors:
        wait_for(lambda: set(cluster.metadata(broker_id).topics) == in_zk, 10,
                 what=f"broker {broker_id}'s Metadata lists every topic in ZooKeeper")
        assert cluster.metadata(broker_id).controller_id == new
        assert cluster.brokers[broker_id].process.poll() is None


def elapsed(seconds: float) -> str:
    return f"{seconds:.2f}s"
