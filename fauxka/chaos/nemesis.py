"""The nemesis: carries out a schedule (schedule.py) on a fauxka.testing.Cluster, through the
fault kit (link, zookeeper, replication, storage, leader and coordinator moves) and the
supervisor's process faults (kill, pause, restart), recording each fault's start and end in the
history. `heal_all()` undoes whatever is in force (the run's end, Ctrl-C, an error): resumes
paused brokers, starts killed ones again, removes the faults it added."""

import threading
import time

from .history import History
from .schedule import DOWN, Step


class Nemesis:
    def __init__(self, cluster, steps: list[Step], history: History, *, topic: str | None = None,
                 groups: tuple[str, ...] = (), transactional_ids: tuple[str, ...] = (), log=None,
                 watched: tuple[str, ...] = (), recovery_s: float = 60.0):
        self.cluster = cluster
        self.steps = steps
        self.history = history
        self.topic = topic  # the partitions `leader` moves
        self.groups = groups
        self.transactional_ids = transactional_ids
        # the topics whose ISRs must be whole again before the next broker goes down: a restarted
        # broker is registered long before it has caught up, and taking another one down then
        # would leave fewer in-sync replicas than min.insync.replicas (the limit the schedule keeps)
        self.watched = watched or ((topic,) if topic else ())
        self.recovery_s = recovery_s
        self._log = log or (lambda message: None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._in_force: dict[int, tuple[Step, object]] = {}  # step index -> (step, what heals it)
        self.injected = 0
        self.failed = 0

    # --- the run -----------------------------------------------------------------

    def start(self) -> "Nemesis":
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="fauxka-nemesis", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 120.0) -> None:
        """Stop injecting, wait for the step under way, heal everything."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
        self.heal_all()

    def _run(self) -> None:
        actions = sorted([(s.start_s, 1, s) for s in self.steps] + [(s.end_s, 0, s) for s in self.steps],
                         key=lambda a: (a[0], a[1]))
        for at, starting, step in actions:
            if self._stop.wait(max(0.0, self._t0 + at - time.monotonic())):
                return
            if starting:
                self._apply(step)
            else:
                self._heal(step.index)

    def _apply(self, step: Step) -> None:
        fields = {"step": step.index, "nemesis": step.nemesis, "broker": step.broker, "peer": step.peer,
                  "partition": step.partition}
        if step.nemesis in DOWN:
            self._wait_recovered(step)
        began = time.time()
        try:
            heal = self._inject(step)
        except Exception as exc:  # a fault that cannot be had now (the broker is down, no ISR to move to)
            self.failed += 1
            self.history.record("fault", phase="failed", error=f"{type(exc).__name__}: {exc}", **fields)
            self._log(f"nemesis: {step.describe()} not injected: {exc}")
            return
        self.injected += 1
        with self._lock:
            self._in_force[step.index] = (step, heal)
        self.history.record("fault", at=began, phase="start", took_s=round(time.time() - began, 3), **fields)
        self._log(f"nemesis: {step.describe()}")

    def _wait_recovered(self, step: Step) -> None:
        """Until every broker is registered and every watched partition's ISR is whole (at most
        recovery_s: then the step goes ahead and the history says it waited in vain)."""
        c = self.cluster
        with self._lock:
            down = sum(1 for s, _ in self._in_force.values() if s.nemesis in DOWN)
        if down:  # overlapping faults by design (--max-down > 1): only the schedule's limit holds
            return

        def recovered():
            if len(c.registered()) < c.size:
                return False
            return all(set(c.isr(t, p)) == set(c.replicas(t, p)) for t in self.watched for p in c.partitions(t))
        began = time.monotonic()
        try:
            c.wait_for(recovered, self.recovery_s, what="every broker back in every ISR")
        except TimeoutError as exc:
            self.history.record("note", what="not recovered", step=step.index, error=str(exc))
            return
        waited = time.monotonic() - began
        if waited > 0.5:
            self.history.record("note", what="waited for recovery", step=step.index, waited_s=round(waited, 2))

    def _heal(self, index: int) -> None:
        with self._lock:
            entry = self._in_force.pop(index, None)
        if entry is None:
            return
        step, heal = entry
        error = None
        for attempt in range(3):
            try:
                if heal is not None:
                    heal()
                error = None
                break
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                time.sleep(1)
        self.history.record("fault", phase="end", step=step.index, nemesis=step.nemesis, broker=step.broker,
                            peer=step.peer, partition=step.partition, error=error)
        if error:
            self._log(f"nemesis: healing #{step.index} failed: {error}")

    def heal_all(self) -> None:
        with self._lock:
            indexes = sorted(self._in_force)
        for index in indexes:
            self._heal(index)
        try:
            self.cluster.clear_faults()  # whatever a failed heal left behind: no fault outlives the run
        except Exception as exc:
            self._log(f"nemesis: clearing the faults failed: {exc}")

    # --- one fault -----------------------------------------------------------------

    def _inject(self, step: Step):
        """Inject it; returns what heals it (None: nothing to heal)."""
        c, b = self.cluster, step.broker
        if step.nemesis == "kill":
            c.kill(b)
            return lambda: c.restart(b)
        if step.nemesis == "pause":
            c.pause(b)
            return lambda: c.resume(b)
        if step.nemesis == "restart":
            c.restart(b)
            return None
        kit = {"link": lambda: c.add_fault("link", broker=b, peer=step.peer),
               "zookeeper": lambda: c.add_fault("zookeeper", broker=b),
               "replication": lambda: c.add_fault("replication", broker=b, delay_ms=-1),
               "storage": lambda: c.add_fault("storage", broker=b, topic=self.topic)}
        if step.nemesis in kit:
            fault = kit[step.nemesis]()
            return lambda: c.remove_fault(fault.id)
        if step.nemesis == "leader":
            moved = self._move(self.topic, step.partition, b, c.move_leader)
            if moved is None:
                raise RuntimeError(f"{self.topic}/{step.partition} has no other in-sync replica to lead")
            return None
        if step.nemesis == "coordinator":
            moved = [self._move("__consumer_offsets", c._offsets_partition(g), b, c.move_leader) for g in self.groups]
            moved += [self._move("__transaction_state", c._txn_partition(i), b, c.move_leader)
                      for i in self.transactional_ids]
            if not any(m is not None for m in moved):
                raise RuntimeError("no coordinator partition has another in-sync replica to lead")
            return None
        raise ValueError(f"unknown nemesis {step.nemesis}")

    def _move(self, topic, partition, broker, move) -> int | None:
        """Make `broker` lead the partition if it is an in-sync replica other than the leader, else
        another such one; the new leader, None when there is none."""
        leader, isr = self.cluster.leader(topic, partition), self.cluster.isr(topic, partition)
        with self._lock:  # a broker this nemesis has down may still be registered and in the ISR
            down = {s.broker for s, _ in self._in_force.values() if s.nemesis in DOWN}
        others = [b for b in isr if b != leader and b not in down and b in self.cluster.registered()]
        if not others:
            return None
        target = broker if broker in others else others[0]
        move(topic, partition, target, 10.0)
        return target
