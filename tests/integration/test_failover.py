"""Controller election and failover with real broker processes (private clusters)."""

import signal
import subprocess
import sys
import time

from tests.harness import SESSION_TIMEOUT_MS, BrokerProcess, wait_for


def test_killing_the_controller_elects_another_and_bumps_the_epoch(make_cluster):
    cluster = make_cluster(3)
    old = cluster.metadata(1).controller_id
    epoch_before = int(cluster.zk_get("/controller_epoch"))
    cluster.brokers[old].signal(signal.SIGKILL)
    killed_at = time.monotonic()
    survivors = [i for i in cluster.brokers if i != old]

    def new_controller():
        views = [cluster.metadata(i) for i in survivors]
        ids = {v.controller_id for v in views}
        return ids.pop() if len(ids) == 1 and ids != {old} and ids != {-1} else None

    new = wait_for(new_controller, SESSION_TIMEOUT_MS / 1000 + 5, what="a new controller")
    elapsed = time.monotonic() - killed_at
    assert new in survivors
    assert int(cluster.zk_get("/controller_epoch")) == epoch_before + 1
    assert b'"brokerid":%d' % new in cluster.zk_get("/controller")
    print(f"new controller {new} after {elapsed:.2f}s (session timeout {SESSION_TIMEOUT_MS} ms)")


def test_graceful_stop_of_the_controller_moves_it_at_once(make_cluster):
    cluster = make_cluster(2)
    old = cluster.metadata(1).controller_id
    cluster.brokers[old].stop()
    assert cluster.brokers[old].process.returncode == 0
    other = 3 - old
    # SIGTERM closes the ZooKeeper session, so no session timeout is waited out.
    wait_for(lambda: cluster.metadata(other).controller_id == other, 1.5, what="controller moved")
    assert cluster.metadata(other).brokers == [other]


def test_a_second_broker_with_a_taken_id_exits_with_a_clear_error(cluster, tmp_path):
    intruder = BrokerProcess(1, cluster.zk_connect, tmp_path, {})
    result = subprocess.run([sys.executable, "-m", "fauxka", "broker", "--config", str(intruder.config)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "already registered" in result.stderr and "/brokers/ids/1" in result.stderr
    # the real broker 1 keeps its registration
    assert cluster.metadata(2).brokers == [1, 2, 3]
    assert f'"PLAINTEXT://127.0.0.1:{cluster.brokers[1].port}"'.encode() in cluster.zk_get("/brokers/ids/1")


def test_a_bad_config_value_is_a_start_up_error_naming_the_key(cluster, tmp_path):
    broker = BrokerProcess(7, cluster.zk_connect, tmp_path, {"num.partitions": "many"})
    result = subprocess.run([sys.executable, "-m", "fauxka", "broker", "--config", str(broker.config)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "num.partitions" in result.stderr
