"""The cluster under faults (issue 5): SIGTERM, a zombie controller, a paused plain broker.

Every test breaks a private cluster on purpose and then checks ZooKeeper's content and what
the surviving brokers answer. Deadlines are generous ("within the session timeout plus a few
seconds"); what matters is what happened, not how fast.
"""

import asyncio
import json
import signal
import threading
import time
import urllib.request

import pytest

from fauxka import probe
from tests.admin_helpers import create_partitions, create_topics, partition_count, topic_spec, unique
from tests.integration.faults_support import ZkWatcher
from tests.harness import SESSION_TIMEOUT_MS, wait_for

SESSION_S = SESSION_TIMEOUT_MS / 1000
NOT_CONTROLLER = 41


def scrape(broker) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=5) as response:
        return response.read().decode()


@pytest.fixture
def zk_watch():
    watchers: list[ZkWatcher] = []

    def make(connect: str) -> ZkWatcher:
        watcher = ZkWatcher(connect)
        watchers.append(watcher)
        return watcher

    yield make
    for watcher in watchers:
        watcher.close()


def test_sigterm_deregisters_a_broker_at_once_and_moves_the_controller(make_cluster, zk_watch):
    cluster = make_cluster(3)
    zk = zk_watch(cluster.zk_connect)
    controller = cluster.controller_id()
    plain = next(i for i in cluster.brokers if i != controller)

    # A plain broker: its registration goes away as soon as it closes its session.
    cluster.brokers[plain].signal(signal.SIGTERM)
    sent = time.monotonic()
    wait_for(lambda: not zk.exists(f"/brokers/ids/{plain}"), 1.5, 0.01, what=f"/brokers/ids/{plain} gone")
    deregistered_s = time.monotonic() - sent
    assert cluster.brokers[plain].process.wait(10) == 0
    assert cluster.controller_id() == controller  # the controller did not move

    # The controller: another broker takes over well before the session timeout.
    epoch = int(zk.get("/controller_epoch"))
    cluster.brokers[controller].signal(signal.SIGTERM)
    sent = time.monotonic()
    survivor = next(i for i in cluster.brokers if i not in (plain, controller))
    wait_for(lambda: zk.controller() == survivor, 1.5, 0.01, what="controller moved to the survivor")
    moved_s = time.monotonic() - sent
    assert not zk.exists(f"/brokers/ids/{controller}")
    assert int(zk.get("/controller_epoch")) == epoch + 1
    assert cluster.brokers[controller].process.wait(10) == 0
    wait_for(lambda: cluster.metadata(survivor).controller_id == survivor, 2, what="survivor's Metadata")
    assert cluster.metadata(survivor).brokers == [survivor]
    print(f"deregistered after {deregistered_s:.3f}s; controller moved after {moved_s:.3f}s "
          f"(session timeout {SESSION_S}s)")


def test_a_zombie_controllers_queued_writes_are_fenced(make_cluster, zk_watch):
    cluster = make_cluster(3)
    zk = zk_watch(cluster.zk_connect)
    old = cluster.controller_id()
    old_address = cluster.address_of(old)
    epoch = int(zk.get("/controller_epoch"))
    recorded = unique("recorded")  # created (and so recorded, not read back) by the controller to be
    assert [r.error_code for r in create_topics(old_address, [topic_spec(recorded, 1, 1)])] == [0]
    cluster.brokers[old].signal(signal.SIGSTOP)
    try:
        stopped = time.monotonic()
        new = wait_for(lambda: (c := zk.controller()) not in (-1, old) and c, SESSION_S + 5,
                       what="another broker elected")
        elected_s = time.monotonic() - stopped
        assert not zk.exists(f"/brokers/ids/{old}")  # its session expired

        # Writes queued at the zombie: its kernel accepts the connections and buffers the
        # requests; nothing answers while the process is stopped.
        names = [unique("zombie") for _ in range(8)]
        answers: dict[str, object] = {}

        def send(name: str) -> None:
            try:
                answers[name] = create_topics(old_address, [topic_spec(name, 1, 1)], timeout_ms=5000)
            except Exception as exc:  # noqa: BLE001 - recorded and asserted on below
                answers[name] = exc

        threads = [threading.Thread(target=send, args=(n,), daemon=True) for n in names]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        assert not answers, "a stopped process answered"
    finally:
        cluster.brokers[old].signal(signal.SIGCONT)
    for thread in threads:
        thread.join(30)
    assert len(answers) == len(names)

    codes = {name: (a if isinstance(a, Exception) else [(r.error_code, r.error_message) for r in a])
             for name, a in answers.items()}
    assert all(c == [(NOT_CONTROLLER, None)] for c in codes.values()), codes
    for name in names:
        assert not zk.exists(f"/brokers/topics/{name}")
        assert not zk.exists(f"/config/topics/{name}")
    assert zk.controller() == new
    assert int(zk.get("/controller_epoch")) == epoch + 1

    # The old controller rejoins as a plain broker.
    wait_for(lambda: zk.exists(f"/brokers/ids/{old}"), SESSION_S + 5, what="old controller re-registered")
    wait_for(lambda: "kafka_controller_kafkacontroller_activecontrollercount 0.0" in scrape(cluster.brokers[old]), 5,
             what="old controller's ActiveControllerCount 0")
    assert "kafka_controller_kafkacontroller_activecontrollercount 1.0" in scrape(cluster.brokers[new])
    wait_for(lambda: cluster.metadata(old).brokers == [1, 2, 3] and cluster.metadata(old).controller_id == new,
             5, what="old controller's Metadata")
    assert cluster.brokers[old].process.poll() is None
    # and the cluster still takes writes through it (forwarded to the new controller)
    later = unique("after-zombie")
    assert [(r.error_code) for r in create_topics(cluster.address_of(new), [topic_spec(later, 1, 1)])] == [0]
    # Having resigned, it follows the topic list again and watches the topics it recorded: it
    # sees the new controller create a topic and change one of its own.
    wait_for(lambda: later in cluster.metadata(old).topics, 5, what="old controller's Metadata lists a new topic")
    assert [r.error_code for r in create_partitions(cluster.address_of(new), recorded, 3)] == [0]
    wait_for(lambda: partition_count(cluster.address_of(old), recorded) == 3, 5,
             what="old controller's Metadata shows the new partitions")
    print(f"new controller {new} {elapsed_fmt(elected_s)} after SIGSTOP of {old}; "
          f"{len(names)} queued writes answered {NOT_CONTROLLER}")


def elapsed_fmt(seconds: float) -> str:
    return f"{seconds:.2f}s"


@pytest.mark.disruptive
def test_a_paused_plain_broker_reregisters_after_its_session_expires(fauxka_cluster_factory, zk_watch):
    """Through the fault kit: `fauxka pause` / `resume` (SIGSTOP / SIGCONT) of a plain broker."""
    cluster = fauxka_cluster_factory(3, {"fauxka.admin.blocking": "cluster",
                                         "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS)})
    zk = zk_watch(cluster.zk_connect)
    controller = cluster.controller()
    paused = next(i for i in cluster.broker_ids if i != controller)
    before = zk.stat(f"/brokers/ids/{paused}")
    assert zk.exists(f"/fauxka/applied/{paused}")
    cluster.pause(paused)
    try:
        wait_for(lambda: paused not in cluster.registered(), SESSION_S + 5, what="session expired")
        assert not zk.exists(f"/fauxka/applied/{paused}")
        assert cluster.controller() == controller
    finally:
        cluster.resume(paused)
    wait_for(lambda: paused in cluster.registered(), SESSION_S + 5, what="re-registered")
    after = zk.stat(f"/brokers/ids/{paused}")
    assert after.ephemeral_owner != before.ephemeral_owner  # a new session's node
    wait_for(lambda: zk.exists(f"/fauxka/applied/{paused}"), 5, what="/fauxka/applied re-published")
    assert f"127.0.0.1:{json.loads(zk.get(f'/brokers/ids/{paused}'))['port']}" == cluster.address(paused)
    # Cluster-consistent blocking works again: it needs the paused broker's applied version.
    name = unique("after-pause")
    assert [r.error_code for r in create_topics(cluster.address(controller), [topic_spec(name, 2, 1)])] == [0]
    host, port = cluster.address(paused).rsplit(":", 1)
    assert name in asyncio.run(probe.metadata(host, int(port), 5.0)).topics
    assert cluster.alive(paused)
