"""One chaos run on a cluster: topics, workloads, the nemesis for `duration_s`, then heal, settle,
read everything back, check, and write history.jsonl, verdict.json and timeline.png to `out`."""

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .checker import Verdict, check
from .history import History
from .schedule import DOWN, ScheduleError, Step, max_down_allowed, most_down_at_once, parse_nemeses, plan

WORKLOADS = ("produce", "txn", "group")
PROCESS_NEMESES = ("kill", "pause", "restart")


class ChaosError(Exception):
    """Bad input or a cluster that cannot be used: one line for the person who asked."""


def parse_workloads(text: str | None) -> tuple[str, ...]:
    if text is None or text.strip() in ("", "all"):
        return WORKLOADS
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown or not names:
        raise ChaosError(f"unknown workload {', '.join(unknown) or repr(text)}; one of: {', '.join(WORKLOADS)}")
    return names


@dataclass
class Options:
    seed: int = 1
    duration_s: float = 60.0
    nemeses: tuple[str, ...] = ()
    workloads: tuple[str, ...] = WORKLOADS
    out: Path | None = None
    partitions: int = 6
    max_down: int | None = None
    rate: float = 100.0  # records per second per producer
    settle_s: float = 90.0
    mean_fault_s: float = 6.0
    picture: bool = True
    log: object = field(default=print, repr=False)


@dataclass
class Result:
    verdict: Verdict
    history: History
    steps: list[Step]
    injected: int
    failed: int
    records: int
    out: Path | None
    cut_short: list[dict] = field(default_factory=list)  # injected, healed before their planned length

    @property
    def held_as_planned(self) -> int:
        """Injected faults that lasted their planned length (each is healed that long after it began;
        only the run's end cuts one short)."""
        return self.injected - len(self.cut_short)

    @property
    def not_reached(self) -> int:
        """Scheduled faults the run ended before (the nemesis waits for recovery between them)."""
        return len(self.steps) - self.injected - self.failed


def _admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})


def check_reachable(bootstrap: str, timeout_s: float = 15.0) -> None:
    from confluent_kafka import KafkaException

    try:
        _admin(bootstrap).list_topics(timeout=timeout_s)
    except KafkaException as exc:
        raise ChaosError(f"no Kafka cluster answers at {bootstrap}: {exc.args[0].str()}") from None


def make_schedule(o: Options, broker_ids: list[int], has_processes: bool = True):
    """(the nemeses, the schedule, brokers out at once at most); ChaosError when it cannot be kept."""
    rf = min(3, len(broker_ids))
    min_insync = max(1, rf - 1)
    nemeses = o.nemeses or parse_nemeses(None)
    if not has_processes:
        asked = [n for n in nemeses if n in PROCESS_NEMESES]
        if o.nemeses and asked:
            raise ChaosError(f"{', '.join(asked)} need a cluster fauxka up started (give --data-dir)")
        nemeses = tuple(n for n in nemeses if n not in PROCESS_NEMESES)
    try:
        steps = plan(o.seed, o.duration_s, nemeses, broker_ids, replication_factor=rf, min_insync=min_insync,
                     partitions=o.partitions, max_down=o.max_down, mean_fault_s=o.mean_fault_s)
    except ScheduleError as exc:
        raise ChaosError(str(exc)) from None
    return nemeses, steps, o.max_down if o.max_down is not None else max_down_allowed(len(broker_ids), rf, min_insync)


class ChaosRun:
    def __init__(self, cluster, options: Options):
        self.cluster, self.o = cluster, options
        self.log = options.log or (lambda message: None)
        self.replication_factor = min(3, cluster.size)
        self.min_insync = max(1, self.replication_factor - 1)
        tag = f"{options.seed}-{uuid.uuid4().hex[:6]}"
        self.topics = {"produce": f"chaos-{tag}", "txn_in": f"chaos-{tag}-in", "txn_out": f"chaos-{tag}-out"}
        self.group, self.txn_group, self.transactional_id = f"chaos-{tag}-group", f"chaos-{tag}-txn", f"chaos-{tag}-tx"
        self.nemeses, self.steps, self.max_down = make_schedule(options, cluster.broker_ids, cluster.has_processes)

    def describe(self) -> str:
        down = [n for n in self.nemeses if n in DOWN]
        return (f"seed {self.o.seed}: {len(self.steps)} faults over {self.o.duration_s:g}s ({', '.join(self.nemeses)}); "
                f"replication factor {self.replication_factor}, min.insync.replicas {self.min_insync}: at most "
                f"{self.max_down} broker(s) out at once" + (f" (the schedule has {most_down_at_once(self.steps)})"
                                                             if down else ""))

    def _create_topics(self) -> None:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import NewTopic

        wanted = [w for w, t in self.topics.items() if t in self._topics_in_use()]
        admin = _admin(self.cluster.bootstrap)  # kept: its futures fail once it is collected
        futures = admin.create_topics(
            [NewTopic(self.topics[w], self.o.partitions, self.replication_factor,
                      config={"min.insync.replicas": str(self.min_insync)}) for w in wanted], operation_timeout=30)
        for name, future in futures.items():
            try:
                future.result(60)
            except KafkaException as exc:
                raise ChaosError(f"creating topic {name}: {exc.args[0].str()}") from None
        for w in wanted:
            self.cluster.wait_for(lambda w=w: all(len(self.cluster.isr(self.topics[w], p)) == self.replication_factor
                                                  for p in range(self.o.partitions)), 60, what=f"{self.topics[w]} ready")

    def run(self) -> Result:
        from .nemesis import Nemesis
        from .txn_workload import TxnWorkload
        from .workloads import GroupWorkload, ProduceWorkload, read_back

        o = self.o
        if o.out is not None:
            o.out.mkdir(parents=True, exist_ok=True)
        check_reachable(self.cluster.bootstrap)
        self._create_topics()
        history = History(o.out / "history.jsonl" if o.out else None)
        history.record("run", seed=o.seed, duration_s=o.duration_s, nemeses=list(self.nemeses),
                       workloads=list(o.workloads), topics=self.topics, transactional_topics=[self.topics["txn_out"]],
                       replication_factor=self.replication_factor, min_insync=self.min_insync, max_down=self.max_down,
                       schedule=[s.to_json() for s in self.steps], bootstrap=self.cluster.bootstrap)
        bootstrap, workloads = self.cluster.bootstrap, {}
        if "produce" in o.workloads or "group" in o.workloads:
            workloads["produce"] = ProduceWorkload(history, bootstrap, self.topics["produce"], o.partitions,
                                                   rate=o.rate).start()
        if "txn" in o.workloads:
            workloads["txn"] = TxnWorkload(history, bootstrap, self.topics["txn_in"], self.topics["txn_out"],
                                           o.partitions, self.txn_group, self.transactional_id, o.seed,
                                           rate=o.rate / 2).start()
        if "group" in o.workloads:
            workloads["group"] = GroupWorkload(history, bootstrap, self.topics["produce"], self.group, o.seed).start()
        nemesis = Nemesis(self.cluster, self.steps, history, topic=self.topics["produce"],
                          groups=(self.group, self.txn_group) if "txn" in o.workloads else (self.group,),
                          transactional_ids=(self.transactional_id,) if "txn" in o.workloads else (),
                          log=self.log, watched=tuple(self._topics_in_use()))
        try:
            try:
                nemesis.start()
                deadline = time.monotonic() + o.duration_s
                while time.monotonic() < deadline:
                    time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
            finally:  # Ctrl-C included: no fault outlives the run
                self.log("healing every fault ...")
                nemesis.stop()
                history.record("note", what="healed")
            self._settle(history)
            if "txn" in workloads:
                self.log("draining the transactional workload ...")
                workloads["txn"].drain(o.settle_s)
            for w in workloads.values():
                w.stop()
            self.log("reading everything back ...")
            if "group" in workloads:
                workloads["group"].record_committed(o.partitions)
            if "produce" in workloads:
                read_back(history, bootstrap, self.topics["produce"], o.partitions, "read_uncommitted")
            if "txn" in workloads:
                read_back(history, bootstrap, self.topics["txn_in"], o.partitions, "read_uncommitted")
                read_back(history, bootstrap, self.topics["txn_out"], o.partitions, "read_committed")
        finally:
            for w in workloads.values():
                w.stop(5)
            history.close()
        verdict = check(history.events)
        records = sum(1 for e in history.events if e["type"] == "send")
        result = Result(verdict, history, self.steps, nemesis.injected, nemesis.failed, records, o.out,
                        list(nemesis.cut_short))
        if o.out is not None:
            (o.out / "verdict.json").write_text(json.dumps(
                {**verdict.to_json(), "records": records, "faults_injected": nemesis.injected,
                 "faults_held_as_planned": result.held_as_planned, "faults_cut_short": result.cut_short,
                 "faults_not_injected": nemesis.failed, "faults_not_reached": result.not_reached, "schedule": [s.describe() for s in self.steps]}, indent=2))
            if o.picture:
                from .picture import draw

                draw(history.events, verdict, o.out / "timeline.png")
        return result

    def _topics_in_use(self) -> list[str]:
        w = self.o.workloads
        return ([self.topics["produce"]] if "produce" in w or "group" in w else []) + \
            ([self.topics["txn_in"], self.topics["txn_out"]] if "txn" in w else [])

    def _settle(self, history: History) -> None:
        """Until every broker is back and every workload partition's ISR is whole again."""
        self.log("waiting for the cluster to settle ...")
        topics = self._topics_in_use()

        def settled():
            if len(self.cluster.registered()) < self.cluster.size:
                return False
            return all(len(self.cluster.isr(t, p)) == self.replication_factor for t in topics
                       for p in range(self.o.partitions))
        try:
            self.cluster.wait_for(settled, self.o.settle_s, what="every broker back and every ISR whole")
            history.record("note", what="settled", ok=True)
        except TimeoutError as exc:
            history.record("note", what="settled", ok=False, error=str(exc))
            self.log(f"not settled: {exc}")
