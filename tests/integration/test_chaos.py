"""`fauxka chaos` on its own clusters: a short fixed-seed run under every nemesis and workload
passes every check, and brokers broken on purpose (fauxka.test.break) are caught by the checker
with the records named: the checker fails when it should."""

import pytest
from confluent_kafka import Producer

from fauxka.chaos import History, check
from fauxka.chaos.workloads import read_back
from fauxka.testing import run_chaos

pytestmark = pytest.mark.disruptive

LAG = {"replica.lag.time.max.ms": "10000"}


@pytest.mark.timeout(420)
def test_a_short_fixed_seed_chaos_run_passes_every_check(fauxka_cluster_factory, tmp_path):
    cluster = fauxka_cluster_factory(3, overrides=LAG)
    result = run_chaos(cluster, seed=294, duration_s=25, out=tmp_path, rate=50, mean_fault_s=3)
    assert result.verdict.ok, result.verdict.describe()
    # seed 294 schedules 12 faults of 7 kinds in 25 s; how many go in depends on the machine's speed
    # (the nemesis waits for the cluster to recover before the next: 3 at a load average of 25)
    assert result.injected >= 2 and result.records > 1000
    assert result.verdict.result("acked_present").checked > 1000
    assert result.verdict.result("transactions_whole").checked > 5
    assert result.verdict.result("group_offsets").checked > 10
    assert (tmp_path / "timeline.png").stat().st_size > 10000 and (tmp_path / "verdict.json").exists()
    assert cluster.list_faults() == [] and len(cluster.registered()) == 3  # no fault outlives the run


def _create(cluster, topic, partitions=1):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 3, config={"min.insync.replicas": "2"})])[topic].result(30)
    cluster.wait_for(lambda: len(cluster.isr(topic, 0)) == 3, 30, what=f"{topic} fully replicated")


@pytest.mark.timeout(240)
def test_the_checker_catches_a_broker_acknowledging_before_replication(fauxka_cluster_factory):
    """Followers stopped, acks=all answered at once (the broken broker), the leader killed: the
    new leader never had the records, so acknowledged records are lost and the verdict names them."""
    cluster = fauxka_cluster_factory(3, overrides={"fauxka.test.break": "ack_before_replication"})
    topic = cluster.unique_topic("broken-acks")
    _create(cluster, topic)
    leader = cluster.leader(topic, 0)
    history = History()
    history.record("run", seed=None)
    stopped = [cluster.add_fault("replication", broker=b, delay_ms=-1) for b in cluster.broker_ids if b != leader]
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True, "acks": "all"})
    for seq in range(20):
        value = f"p0-{seq}"
        history.record("send", producer="p0", seq=seq, value=value, topic=topic, partition=0)
        producer.produce(topic, value.encode(), partition=0, on_delivery=lambda err, msg, value=value: history.record(
            "ack", value=value, topic=msg.topic(), partition=msg.partition(), offset=msg.offset()) if err is None
            else history.record("fail", value=value, error=str(err)))
    assert producer.flush(30) == 0
    assert sum(e["type"] == "ack" for e in history.events) == 20  # acknowledged, yet only the leader has them
    cluster.kill(leader)
    for fault in stopped:
        cluster.remove_fault(fault.id)
    cluster.wait_for(lambda: cluster.leader(topic, 0) not in (-1, leader), 30, what="a new leader")
    cluster.restart(leader)
    cluster.wait_for(lambda: len(cluster.isr(topic, 0)) == 3, 60, what="the old leader back in the ISR")
    read_back(history, cluster.bootstrap, topic, 1, "read_uncommitted")
    verdict = check(history.events)
    assert not verdict.ok
    lost = verdict.result("acked_present").anomalies
    assert lost == [f"lost: p0-{seq} acknowledged at {topic}/0@{seq}, not in the read-back" for seq in range(20)], \
        verdict.describe()


@pytest.mark.timeout(180)
def test_the_checker_catches_read_committed_showing_aborted_records(fauxka_cluster_factory):
    cluster = fauxka_cluster_factory(3, overrides={"fauxka.test.break": "read_committed_sees_aborted"})
    topic = cluster.unique_topic("broken-rc")
    _create(cluster, topic)
    history = History()
    history.record("run", seed=None, transactional_topics=[topic])
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": cluster.unique_topic("tid")})
    producer.init_transactions(30)
    for number, outcome in enumerate(("commit", "abort", "commit")):
        txn = f"t-{number}"
        values = [f"i-{number}-{k}|{txn}" for k in range(3)]
        producer.begin_transaction()
        history.record("txn", phase="begin", txn=txn, values=values)
        for value in values:
            producer.produce(topic, value.encode(), partition=0)
        if outcome == "commit":
            producer.commit_transaction(30)
        else:
            producer.flush(30)
            producer.abort_transaction(30)
        history.record("txn", phase=outcome, txn=txn, ok=True)
    read_back(history, cluster.bootstrap, topic, 1, "read_committed")
    verdict = check(history.events)
    assert [r.name for r in verdict.results if not r.ok] == ["read_committed_no_aborted"], verdict.describe()
    assert verdict.result("read_committed_no_aborted").anomalies == [
        f"aborted record seen: i-1-{k}|t-1 of aborted transaction t-1 at {topic}/0@{4 + k} (final read-back)"
        for k in range(3)]


@pytest.mark.timeout(240)
def test_ctrl_c_heals_every_fault_before_exiting(fauxka_cluster_factory, tmp_path):
    """SIGINT while a pause or a replication fault is in force: `fauxka chaos` resumes the broker,
    removes the fault, says so in one line and exits 130."""
    import json
    import signal
    import subprocess
    import sys

    from fauxka.testing.cluster import _paused

    cluster = fauxka_cluster_factory(3)
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "fauxka", "chaos", "--data-dir", str(cluster.data_dir),
                                "--nemesis", "pause,replication", "--workload", "produce", "--duration", "120",
                                "--seed", "5", "--rate", "20", "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def a_fault_in_force():
            lines = (out / "history.jsonl").read_text().splitlines() if (out / "history.jsonl").exists() else []
            faults = [json.loads(line) for line in lines if '"type": "fault"' in line]
            return faults and faults[-1]["phase"] == "start"
        cluster.wait_for(a_fault_in_force, 90, what="a fault in force")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "fauxka chaos: interrupted; every fault healed"
    assert cluster.list_faults() == []
    state = json.loads((cluster.data_dir / "cluster.json").read_text())
    assert not any(_paused(b["pid"]) for b in state["brokers"])
    # the brokers serve again: a produce with acks=all goes through
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    producer.produce(cluster.unique_topic("after"), b"x")
    assert producer.flush(60) == 0


@pytest.mark.timeout(300)
def test_a_users_own_application_under_the_nemesis_with_its_own_history(fauxka_cluster_factory):
    """fauxka.testing.chaos: the user's producer loop records into run.history while pauses,
    leader moves and follower stalls hit the cluster; every fault is healed when the block ends
    and the checker passes over the user's history and read-back."""
    import time

    from fauxka.testing import chaos

    cluster = fauxka_cluster_factory(3, overrides=LAG)
    topic = cluster.unique_topic("app")
    _create(cluster, topic, partitions=3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True, "acks": "all",
                         "linger.ms": 5})
    with chaos(cluster, seed=3, duration_s=25, nemeses=("pause", "leader", "replication"), topic=topic,
               partitions=3, mean_fault_s=3) as run:
        record = run.history.record
        seq, until = 0, time.monotonic() + 25
        while time.monotonic() < until:
            value = f"app-{seq}"
            record("send", producer="app", seq=seq, value=value, topic=topic, partition=seq % 3)
            producer.produce(topic, value.encode(), partition=seq % 3, on_delivery=lambda err, msg, value=value: record(
                "ack", value=value, topic=msg.topic(), partition=msg.partition(), offset=msg.offset())
                if err is None else record("fail", value=value, error=str(err)))
            producer.poll(0.02)
            seq += 1
    assert cluster.list_faults() == []
    assert run.nemesis.injected >= 2, [e for e in run.history.events if e["type"] == "fault"]
    assert producer.flush(120) == 0
    cluster.wait_for(lambda: all(len(cluster.isr(topic, p)) == 3 for p in range(3)), 60, what="ISRs whole")
    read_back(run.history, cluster.bootstrap, topic, 3, "read_uncommitted")
    verdict = run.check()
    assert verdict.ok, verdict.describe()
    assert verdict.result("acked_present").checked > 200


@pytest.mark.timeout(240)
def test_a_fault_delayed_by_recovery_holds_its_planned_length(fauxka_cluster_factory):
    """A kill's restart and catching up delay the next fault's start; that fault still lasts its
    planned 1.6 s from when it began (it once ended at its scheduled end: 0.5 ms of a planned pause)."""
    from fauxka.chaos.nemesis import Nemesis
    from fauxka.chaos.schedule import Step

    cluster = fauxka_cluster_factory(3, overrides=LAG)
    topic = cluster.unique_topic("held")
    _create(cluster, topic)
    steps = [Step(0, 0.0, 0.5, "kill", 2), Step(1, 0.6, 2.2, "pause", 3)]
    history = History(None)
    nemesis = Nemesis(cluster, steps, history, topic=topic).start()
    cluster.wait_for(lambda: any(e["type"] == "fault" and e["phase"] == "end" and e["step"] == 1
                                 for e in history.events), 60, what="the pause healed")
    nemesis.stop()
    started = {e["step"]: e["t"] for e in history.events if e["type"] == "fault" and e["phase"] == "start"}
    ended = {e["step"]: e for e in history.events if e["type"] == "fault" and e["phase"] == "end"}
    # began late: broker 2's restart (the kill's heal) and its return to the ISR came first...
    assert started[1] - started[0] > 0.6 + 0.5, history.events
    assert ended[1]["held_s"] >= 1.6 - 0.05  # ...and still lasted as planned
    assert ended[1]["t"] - started[1] >= 1.6 - 0.05
    assert nemesis.cut_short == [] and cluster.list_faults() == []
