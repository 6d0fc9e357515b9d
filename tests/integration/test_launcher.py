"""`fauxka up --detach`, `status` and `down` as a user runs them."""

import json
import socket
import subprocess
import sys

from fauxka.ports import free_ports
from tests.admin_helpers import create_topics, topic_spec, unique


def fauxka(*args, timeout=90):
    return subprocess.run([sys.executable, "-m", "fauxka", *args], capture_output=True, text=True, timeout=timeout)


def test_up_status_down(tmp_path):
    zk_port, base = free_ports(), free_ports(2)  # brokers listen on base and base + 1
    data_dir = tmp_path / "cluster"
    up = fauxka("up", "--brokers", "2", "--data-dir", str(data_dir), "--zookeeper-port", str(zk_port),
                "--base-port", str(base), "--metrics-base-port", "0", "--detach", "--timeout", "60")
    try:
        assert up.returncode == 0, up.stderr
        assert f"bootstrap: 127.0.0.1:{base},127.0.0.1:{base + 1}" in up.stdout
        assert "ready in" in up.stdout
        again = fauxka("up", "--data-dir", str(data_dir), "--detach")
        assert again.returncode == 1 and "already running" in again.stderr
        status = fauxka("status", "--data-dir", str(data_dir))
        assert status.returncode == 0, status.stderr
        assert "brokers:    1, 2" in status.stdout
        assert "(epoch 1)" in status.stdout
        # the controller's audit trail lands in the data dir, where `fauxka report` looks
        name = unique("audited")
        assert [r.error_code for r in create_topics(f"127.0.0.1:{base}", [topic_spec(name, 1, 1)])] == [0]
        events = [json.loads(line) for path in data_dir.glob("audit-*.log") for line in path.read_text().splitlines()]
        assert [(e["resource_name"], e["action"], e["error_code"]) for e in events] == [(name, "CREATE", 0)]
    finally:
        down = fauxka("down", "--data-dir", str(data_dir))
    assert down.returncode == 0, down.stderr
    assert not (data_dir / "cluster.json").exists()
    after = fauxka("status", "--bootstrap", f"127.0.0.1:{base}")
    assert "no answer" in after.stdout


def test_up_fails_with_the_reason_when_a_broker_exits(tmp_path):
    """A broker that cannot bind its port exits; `up` says which and why, and stops the rest."""
    zk_port, base = free_ports(), free_ports(2)
    data_dir = tmp_path / "cluster"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", base + 1))
        taken.listen()
        up = fauxka("up", "--brokers", "2", "--data-dir", str(data_dir), "--zookeeper-port", str(zk_port),
                    "--base-port", str(base), "--metrics-base-port", "0", "--detach", "--timeout", "60")
    assert up.returncode == 1
    assert "broker 2 exited" in up.stderr and "address already in use" in up.stderr, up.stderr
    assert not (data_dir / "cluster.json").exists()
    assert "no answer" in fauxka("status", "--bootstrap", f"127.0.0.1:{base}").stdout
