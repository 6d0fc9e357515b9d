"""`fauxka up --detach`, `status` and `down` as a user runs them."""

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fauxka.ports import free_ports
from tests.admin_helpers import create_topics, topic_spec, unique
from tests.harness import wait_for
from tests.metrics_helpers import scrape


def fauxka(*args, timeout=90):
    return subprocess.run([sys.executable, "-m", "fauxka", *args], capture_output=True, text=True, timeout=timeout)


def test_up_status_down(tmp_path):
    zk_port, base, metrics = free_ports(), free_ports(2), free_ports(2)  # brokers listen on base and base + 1
    data_dir = tmp_path / "cluster"
    up = fauxka("up", "--brokers", "2", "--data-dir", str(data_dir), "--zookeeper-port", str(zk_port),
                "--base-port", str(base), "--metrics-base-port", str(metrics - 1), "--detach", "--timeout", "60")
    try:
        assert up.returncode == 0, up.stderr
        assert f"bootstrap: 127.0.0.1:{base},127.0.0.1:{base + 1}" in up.stdout
        assert "ready in" in up.stdout
        # the README: `up` prints the metrics ports, and they serve Kafka's names
        assert (f"metrics:   broker 1 http://127.0.0.1:{metrics}/metrics, "
                f"broker 2 http://127.0.0.1:{metrics + 1}/metrics") in up.stdout, up.stdout
        assert "kafka_server_kafkaserver_brokerstate 3.0" in scrape(metrics + 1)
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
        # the first thing every Kafka tutorial does: a topic made by producing to it (auto-creation)
        bootstrap = f"127.0.0.1:{base}"
        produced = subprocess.run(["kcat", "-P", "-b", bootstrap, "-t", "demo"], input=b"hello\n",
                                  capture_output=True, timeout=60)
        assert produced.returncode == 0, produced.stderr
        consumed = subprocess.run(["kcat", "-C", "-b", bootstrap, "-t", "demo", "-e"], capture_output=True, timeout=60)
        assert (consumed.returncode, consumed.stdout) == (0, b"hello\n"), consumed.stderr
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
    # which address, for what, and who holds it (this test's process)
    assert f"listener PLAINTEXT cannot bind 127.0.0.1:{base + 1}" in up.stderr, up.stderr
    assert f"held by pid {os.getpid()}" in up.stderr, up.stderr
    assert not (data_dir / "cluster.json").exists()
    assert "no answer" in fauxka("status", "--bootstrap", f"127.0.0.1:{base}").stdout


def test_up_broker_override(tmp_path):
    """`--broker-override ID:KEY=VALUE` sets a property of one broker: here a second listener on broker 2
    only, whose Metadata names just the brokers that have that listener (as Kafka's does)."""
    from confluent_kafka.admin import AdminClient

    zk_port, base, extra = free_ports(), free_ports(2), free_ports()
    data_dir = tmp_path / "cluster"
    bad = fauxka("up", "--data-dir", str(data_dir), "--brokers", "2", "--broker-override", "3:broker.rack=r3")
    assert bad.returncode == 2 and "no broker 3 (brokers are 1..2)" in bad.stderr
    up = fauxka("up", "--brokers", "2", "--data-dir", str(data_dir), "--zookeeper-port", str(zk_port),
                "--base-port", str(base), "--metrics-base-port", "0", "--detach", "--timeout", "60",
                "--override", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,EXTRA:PLAINTEXT",
                "--broker-override", f"2:listeners=PLAINTEXT://127.0.0.1:{base + 1},EXTRA://127.0.0.1:{extra}")
    try:
        assert up.returncode == 0, up.stderr
        metadata = AdminClient({"bootstrap.servers": f"127.0.0.1:{extra}"}).list_topics(timeout=20)
        assert {b.id: b.port for b in metadata.brokers.values()} == {2: extra}
        plain = AdminClient({"bootstrap.servers": f"127.0.0.1:{base}"}).list_topics(timeout=20)
        assert {b.id: b.port for b in plain.brokers.values()} == {1: base, 2: base + 1}
    finally:
        down = fauxka("down", "--data-dir", str(data_dir))
    assert down.returncode == 0, down.stderr


def test_up_tls(tmp_path):
    """`up --tls`: SSL listeners with a throw-away CA, brokers forwarding to each other over SSL, and the
    printed settings work for a real client."""
    from confluent_kafka.admin import AdminClient, NewTopic

    zk_port, base = free_ports(), free_ports(2)
    data_dir = tmp_path / "cluster"
    up = fauxka("up", "--tls", "--brokers", "2", "--data-dir", str(data_dir), "--zookeeper-port", str(zk_port),
                "--base-port", str(base), "--metrics-base-port", "0", "--detach", "--timeout", "60",
                "--override", "advertised.controller=self")
    try:
        assert up.returncode == 0, up.stderr
        tls = data_dir / "tls"
        assert f"ssl.ca.location={tls / 'ca.pem'}" in up.stdout
        assert f"ssl.certificate.location={tls / 'client.pem'}" in up.stdout
        status = fauxka("status", "--data-dir", str(data_dir))
        assert status.returncode == 0 and "brokers:    1, 2" in status.stdout, status.stdout + status.stderr
        for port in (base, base + 1):  # each broker answers itself (advertised.controller=self): one forwards
            admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SSL",
                                 "ssl.ca.location": str(tls / "ca.pem"),
                                 "ssl.certificate.location": str(tls / "client.pem"),
                                 "ssl.key.location": str(tls / "client.key")})
            name = unique("tls-up")
            admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
        # a plaintext client (status without the cluster's state) gets nothing from an SSL port
        assert "no answer" in fauxka("status", "--bootstrap", f"127.0.0.1:{base}").stdout
    finally:
        down = fauxka("down", "--data-dir", str(data_dir))
    assert down.returncode == 0, down.stderr


def test_ctrl_c_stops_everything_when_output_is_piped_to_tee(tmp_path):
    """`fauxka up | tee up.log`, then Ctrl-C: tee dies with up, and up still stops every process."""
    import time

    zk_port, base = free_ports(), free_ports(2)
    data_dir = tmp_path / "cluster"
    log = tmp_path / "up.log"
    command = (f"{sys.executable} -m fauxka up --brokers 2 --data-dir {data_dir} --zookeeper-port {zk_port} "
               f"--base-port {base} --metrics-base-port 0 --timeout 60 | tee {log}")
    shell = subprocess.Popen(["sh", "-c", command], start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while "press Ctrl-C" not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline and shell.poll() is None, "up did not become ready"
            time.sleep(0.1)
        state = json.loads((data_dir / "cluster.json").read_text())
        pids = [b["pid"] for b in state["brokers"]] + [state["zookeeper"]["pid"]]
        os.killpg(shell.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group, tee included
        shell.wait(30)

        def alive(pid):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split()[2] != "Z"
        deadline = time.monotonic() + 20
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if alive(p)]
        assert not (data_dir / "cluster.json").exists()
    finally:
        if shell.poll() is None:
            os.killpg(shell.pid, signal.SIGKILL)
        fauxka("down", "--data-dir", str(data_dir))


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_zookeeper_stops_its_java_process_on_sigterm_and_sighup(tmp_path, stop):
    """`fauxka zookeeper` in the foreground, stopped by a process manager or a closed terminal."""
    port = free_ports()
    out = tmp_path / "out"
    with open(out, "wb") as sink:
        command = subprocess.Popen([sys.executable, "-m", "fauxka", "zookeeper", "--port", str(port),
                                    "--data-dir", str(tmp_path / "zk")], stdout=sink, stderr=subprocess.STDOUT)
    java = None
    try:
        wait_for(lambda: b"ZooKeeper serving" in out.read_bytes() or command.poll() is not None, 60,
                 0.1, "ZooKeeper serving")
        assert command.poll() is None, out.read_text()
        children = Path(f"/proc/{command.pid}/task/{command.pid}/children").read_text().split()
        [java] = [int(c) for c in children]
        assert "QuorumPeerMain" in Path(f"/proc/{java}/cmdline").read_text()
        command.send_signal(stop)
        assert command.wait(30) == 0, out.read_text()
        assert not Path(f"/proc/{java}").exists()  # stopped and reaped
        with socket.socket() as free:  # no listener left (the probes' closed connections may linger)
            free.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            free.bind(("127.0.0.1", port))
            free.listen()
    finally:
        if command.poll() is None:
            command.kill()
        if java is not None and Path(f"/proc/{java}").exists():
            os.kill(java, signal.SIGKILL)
