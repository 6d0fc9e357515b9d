"""The nemesis schedule: which fault starts when, on which broker, for how long. Pure: the same
seed and arguments give the same schedule (random.Random(seed), nothing else).

The limit: a fault that takes a broker out of the in-sync replicas (kill, pause, restart, link,
zookeeper, replication, storage) counts against `max_down`, which may not exceed
replication.factor - min.insync.replicas (more and acks=all producers must stop: the run would
measure unavailability, not safety). Leadership moves (leader, coordinator) take nobody down and
may overlap anything."""

import random
from dataclasses import asdict, dataclass

NEMESES = ("kill", "pause", "restart", "link", "zookeeper", "replication", "storage", "leader", "coordinator")
# faults that take one broker (`broker`) out of the ISRs while they last
DOWN = frozenset(("kill", "pause", "restart", "link", "zookeeper", "replication", "storage"))


class ScheduleError(ValueError):
    pass


@dataclass(frozen=True)
class Step:
    index: int
    start_s: float        # seconds after the run's start
    end_s: float          # when it is healed (a move or a restart: when the next may start)
    nemesis: str
    broker: int           # the broker it takes down, or the one a move makes leader
    peer: int | None = None  # link: the other end
    partition: int | None = None  # leader: the workload partition moved (coordinator: None)

    def describe(self) -> str:
        what = {"link": f"link {self.broker}<->{self.peer}", "leader": f"leader of partition {self.partition} -> {self.broker}",
                "coordinator": f"coordinators -> {self.broker}"}.get(self.nemesis, f"{self.nemesis} broker {self.broker}")
        return f"#{self.index} {self.start_s:7.1f}s..{self.end_s:7.1f}s  {what}"

    def to_json(self) -> dict:
        return asdict(self)


def parse_nemeses(text: str | None) -> tuple[str, ...]:
    """"kill,pause" -> ("kill", "pause"); "all" or None: every one; ScheduleError naming an unknown one."""
    if text is None or text.strip() in ("", "all"):
        return NEMESES
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in NEMESES]
    if unknown:
        raise ScheduleError(f"unknown nemesis {', '.join(unknown)}; one of: {', '.join(NEMESES)}")
    return names


def max_down_allowed(brokers: int, replication_factor: int, min_insync: int) -> int:
    """How many brokers may be out at once with every partition still taking acks=all writes."""
    return max(0, min(brokers, replication_factor) - min_insync)


def plan(seed: int, duration_s: float, nemeses: tuple[str, ...], brokers: list[int], *, replication_factor: int,
         min_insync: int, partitions: int, max_down: int | None = None, warmup_s: float = 3.0,
         mean_fault_s: float = 6.0, mean_gap_s: float = 2.0) -> list[Step]:
    """A schedule over `duration_s` seconds (faults start after `warmup_s` and are all healed by
    the end). ScheduleError when the limits cannot be kept."""
    allowed = max_down_allowed(len(brokers), replication_factor, min_insync)
    if max_down is None:
        max_down = allowed
    downing = [n for n in nemeses if n in DOWN]
    if max_down > allowed:
        raise ScheduleError(
            f"--max-down {max_down} would take down more brokers than the cluster survives: with {len(brokers)} "
            f"broker(s), replication factor {replication_factor} and min.insync.replicas {min_insync}, at most "
            f"{allowed} may be out at once")
    if downing and max_down < 1:
        raise ScheduleError(
            f"{', '.join(downing)} take a broker down, but with {len(brokers)} broker(s), replication factor "
            f"{replication_factor} and min.insync.replicas {min_insync} none may be out (acks=all would stop)")
    if "link" in nemeses and len(brokers) < 2:
        raise ScheduleError("link needs two brokers")
    if any(n in nemeses for n in ("leader", "coordinator")) and len(brokers) < 2:
        raise ScheduleError("leader and coordinator moves need two brokers")
    rng = random.Random(seed)
    steps: list[Step] = []
    down: list[tuple[float, int]] = []  # (end, broker) of the faults in force
    t = warmup_s
    end_of_faults = duration_s - 1.0
    while nemeses:
        t += rng.expovariate(1 / mean_gap_s)
        nemesis = rng.choice(nemeses)
        length = min(max(1.0, rng.expovariate(1 / mean_fault_s)), 3 * mean_fault_s)
        if nemesis in ("leader", "coordinator", "restart"):
            length = 1.0 if nemesis != "restart" else max(length, 2.0)
        if t + length > end_of_faults:
            break
        down = [(e, b) for e, b in down if e > t]
        if nemesis in DOWN:
            if len(down) >= max_down:  # wait until the first one in force is healed
                t = min(e for e, _ in down)
                down = [(e, b) for e, b in down if e > t]
                if t + length > end_of_faults:
                    break
            free = [b for b in brokers if b not in {b for _, b in down}]
            broker = rng.choice(free)
            peer = rng.choice([b for b in brokers if b != broker]) if nemesis == "link" else None
            down.append((t + length, broker))
            steps.append(Step(len(steps), round(t, 3), round(t + length, 3), nemesis, broker, peer))
        else:
            partition = rng.randrange(partitions) if nemesis == "leader" else None
            steps.append(Step(len(steps), round(t, 3), round(t + length, 3), nemesis, rng.choice(brokers),
                              partition=partition))
    return steps


def most_down_at_once(steps: list[Step]) -> int:
    """The most brokers the schedule has out at one time (what the limit bounds)."""
    edges = sorted([(s.start_s, 1) for s in steps if s.nemesis in DOWN] +
                   [(s.end_s, -1) for s in steps if s.nemesis in DOWN], key=lambda e: (e[0], e[1]))
    most = current = 0
    for _, delta in edges:
        current += delta
        most = max(most, current)
    return most
