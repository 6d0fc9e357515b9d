"""Strimzi's Kafka alert rules (config/prometheus/kafka-rules.yml, as the compose Prometheus loads
them) fire on a `fauxka up` cluster for the faults they are written for, evaluated by a real
Prometheus scraping every second: a follower killed -> UnderReplicatedPartitions on the leader; a
log dir failed with the fault kit -> OfflineLogDirectoryCount on that broker; the controller killed
-> exactly one active controller again, and AbnormalControllerState does not fire."""

import subprocess
import sys

from fauxka.ports import free_ports
from fauxka.testing import Cluster
from fauxka.testing.cluster import wait_for
from tests.admin_helpers import create_topics, topic_spec, unique
from tests.prometheus_helpers import firing, prometheus, query


def _fauxka(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fauxka", *args], capture_output=True, text=True, timeout=90)


def test_strimzi_alerts_fire_for_their_faults(tmp_path):
    zk_port, base, metrics = free_ports(), free_ports(3), free_ports(3)
    data_dir = tmp_path / "cluster"
    # a killed broker's session ends 3 s later (then the controller takes it out of the ISRs)
    up = _fauxka("up", "--brokers", "3", "--data-dir", str(data_dir), "--zookeeper-port", str(zk_port),
                 "--base-port", str(base), "--metrics-base-port", str(metrics - 1), "--detach",
                 "--override", "zookeeper.session.timeout.ms=3000")
    assert up.returncode == 0, up.stderr
    cluster = Cluster.attach(data_dir)
    instance = {b: f"127.0.0.1:{metrics + b - 1}" for b in (1, 2, 3)}
    try:
        with prometheus(tmp_path, list(instance.values()), rules=True) as port:
            topic = unique()
            assert [r.error_code for r in create_topics(cluster.address(1), [topic_spec(topic, 1, 3)])] == [0]
            wait_for(lambda: len(cluster.isr(topic, 0)) == 3, 10, what="the ISR full")
            leader = cluster.leader(topic, 0)
            killed, failed = [b for b in cluster.replicas(topic, 0) if b != leader]
            assert not firing(port, "UnderReplicatedPartitions")
            cluster.kill(killed)
            cluster.add_fault("storage", broker=failed)
            wait_for(lambda: [a["instance"] for a in firing(port, "UnderReplicatedPartitions")] == [instance[leader]],
                     60, interval_s=0.5, what="UnderReplicatedPartitions firing on the leader")
            wait_for(lambda: [a["instance"] for a in firing(port, "OfflineLogDirectoryCount")] == [instance[failed]],
                     60, interval_s=0.5, what="OfflineLogDirectoryCount firing on the failed broker")
            cluster.clear_faults()

            controller = cluster.controller()
            cluster.kill(controller)

            def one_other_controller() -> bool:
                active = [r for r in query(port, "kafka_controller_kafkacontroller_activecontrollercount == 1")]
                total = query(port, "sum(kafka_controller_kafkacontroller_activecontrollercount)")
                return (len(active) == 1 and active[0]["metric"]["instance"] != instance[controller]
                        and float(total[0]["value"][1]) == 1)

            wait_for(one_other_controller, 60, interval_s=0.5, what="exactly one active controller, another broker")
            assert not firing(port, "AbnormalControllerState")
    finally:
        cluster.stop()
        down = _fauxka("down", "--data-dir", str(data_dir))
        assert down.returncode == 0, down.stderr
