"""The nemesis: carries out a schedule (schedule.py) on a fauxka.testing.Cluster, through the
fault kit (link, zookeeper, replication, storage, leader and coordinator moves) and the
supervisor's process faults (kill, pause, restart), recording each fault's start and end in the
history. `heal_all()` undoes whatever is in force (the run's end, Ctrl-C, an error): resumes
paused brokers, starts killed ones again, removes the faults it added."""

import heapq
import threading
import time

from .history import History
from .schedule import DOWN, Step

RECHECK_S = 0.2  # how often a step waiting for the cluster to recover looks again
HELD_TOLERANCE_S = 0.05  # a heal this much before the planned length still counts as held as planned


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
        self._in_force: dict[int, tuple[Step, object, float]] = {}  # step index -> (step, what heals it, since)
        self._waiting: dict[int, float] = {}  # step index -> when it began waiting for recovery
        self.injected = 0
        self.failed = 0
        self.cut_short: list[dict] = []  # faults healed before their planned length (the run's end)

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
        """Each step starts at its time, or later while the cluster recovers (a DOWN step waits until
        every broker is back in every ISR, polled so that heals stay on time); it is healed its
        planned length after it actually started, not at its scheduled end (a start delayed by the
        wait must not shorten the fault: a pause planned 1.6 s once lasted 0.5 ms)."""
        by_index = {s.index: s for s in self.steps}
        due = [(s.start_s, 1, s.index) for s in self.steps]  # (seconds since t0, 0 heal / 1 start, step)
        heapq.heapify(due)
        while due:
            at, starting, index = heapq.heappop(due)
            if self._stop.wait(max(0.0, self._t0 + at - time.monotonic())):
                return
            if not starting:
                self._heal(index)
                continue
            step = by_index[index]
            if not self._ready(step):
                heapq.heappush(due, (time.monotonic() - self._t0 + RECHECK_S, 1, index))
                continue
            began = self._apply(step)
            if began is not None:
                heapq.heappush(due, (began + step.end_s - step.start_s, 0, index))

    def _apply(self, step: Step) -> float | None:
        """Inject the step; when it started (seconds since t0), None if it could not be injected."""
        fields = {"step": step.index, "nemesis": step.nemesis, "broker": step.broker, "peer": step.peer,
                  "partition": step.partition}
        began = time.time()
        try:
            heal = self._inject(step)
        except Exception as exc:  # a fault that cannot be had now (the broker is down, no ISR to move to)
            self.failed += 1
            self.history.record("fault", phase="failed", error=f"{type(exc).__name__}: {exc}", **fields)
            self._log(f"nemesis: {step.describe()} not injected: {exc}")
            return None
        self.injected += 1
        in_force = time.monotonic()  # its planned length counts from here
        with self._lock:
            self._in_force[step.index] = (step, heal, in_force)
        self.history.record("fault", at=began, phase="start", took_s=round(time.time() - began, 3),
                            planned_s=round(step.end_s - step.start_s, 3), **fields)
        self._log(f"nemesis: {step.describe()}")
        return in_force - self._t0

    def _ready(self, step: Step) -> bool:
        """Whether a step may start now: a DOWN step waits while a DOWN fault it was not planned to
        overlap is still in force (held past its scheduled end), then until every broker is registered
        and every watched partition's ISR is whole (at most recovery_s: then it goes ahead and the
        history says it waited in vain)."""
        if step.nemesis not in DOWN:
            return True
        with self._lock:
            down = [s for s, _, _ in self._in_force.values() if s.nemesis in DOWN]
        if any(s.end_s <= step.start_s for s in down):
            return False  # the schedule's max_down holds: the longer-held one ends first
        if down:  # overlapping faults by design (--max-down > 1): only the schedule's limit holds
            return True
        c = self.cluster
        waiting_since = self._waiting.setdefault(step.index, time.monotonic())
        waited = time.monotonic() - waiting_since
        try:
            recovered = len(c.registered()) >= c.size and all(
                set(c.isr(t, p)) == set(c.replicas(t, p)) for t in self.watched for p in c.partitions(t))
        except Exception:  # ZooKeeper out of reach for a moment: look again
            recovered = False
        if not recovered and waited < self.recovery_s:
            return False
        if not recovered:
            self.history.record("note", what="not recovered", step=step.index, waited_s=round(waited, 2))
        elif waited > 0.5:
            self.history.record("note", what="waited for recovery", step=step.index, waited_s=round(waited, 2))
        return True

    def _heal(self, index: int) -> None:
        with self._lock:
            entry = self._in_force.pop(index, None)
        if entry is None:
            return
        step, heal, since = entry
        held_s, planned_s = time.monotonic() - since, step.end_s - step.start_s
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
        if heal is not None and held_s < planned_s - HELD_TOLERANCE_S:  # healed early: the run ended
            self.cut_short.append({"step": step.index, "held_s": round(held_s, 3), "planned_s": round(planned_s, 3)})
        self.history.record("fault", phase="end", step=step.index, nemesis=step.nemesis, broker=step.broker,
                            peer=step.peer, partition=step.partition, error=error, held_s=round(held_s, 3))
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
            down = {s.broker for s, _, _ in self._in_force.values() if s.nemesis in DOWN}
        others = [b for b in isr if b != leader and b not in down and b in self.cluster.registered()]
        if not others:
            return None
        target = broker if broker in others else others[0]
        move(topic, partition, target, 10.0)
        return target
