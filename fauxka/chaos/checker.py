"""The checker: reads a history (fauxka/chaos/history.py's events, the final read-back included)
against the guarantees Kafka gives, and names every record that breaks one. Pure: events in,
verdict out (no cluster, no clock).

Records are told apart by their values (the workloads write unique ones: `p0-17` is producer p0's
17th record; a transaction's outputs are `<input>|<txn>`), so histories a user records work too as
long as their values are unique."""

from collections import Counter, defaultdict
from dataclasses import dataclass, field

CHECKS = {
    "acked_present": "every acknowledged record is in its partition, at the offset it was acknowledged with",
    "no_duplicates": "no record (acknowledged or not) appears twice",
    "producer_order": "an idempotent producer's records keep their order in each partition",
    "poll_order": "a consumer that never seeks (static: true) sees each partition's offsets only go up",
    "offsets_contiguous": "offsets go up by one from the log start to the high watermark (topics without transactions)",
    "read_committed_no_aborted": "read_committed never shows a record of an aborted transaction",
    "transactions_whole": "a committed transaction is seen whole; one whose outcome is unknown all or nothing",
    "processed_once": "consume-transform-produce: each input is in the committed output at most once (exactly once when drained)",
    "group_offsets": "a group's committed offsets never go backwards and never pass the log end",
}
READ_UNCOMMITTED, READ_COMMITTED = "read_uncommitted", "read_committed"


@dataclass
class CheckResult:
    name: str
    checked: int = 0
    anomalies: list[str] = field(default_factory=list)
    note: str = ""  # what was not checked, and why (not an anomaly)

    @property
    def ok(self) -> bool:
        return not self.anomalies

    def to_json(self) -> dict:
        return {"check": self.name, "ok": self.ok, "checked": self.checked, "what": CHECKS[self.name],
                "anomalies": self.anomalies, **({"note": self.note} if self.note else {})}


@dataclass
class Verdict:
    seed: int | None
    results: list[CheckResult]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def anomalies(self) -> int:
        return sum(len(r.anomalies) for r in self.results)

    def result(self, name: str) -> CheckResult:
        return next(r for r in self.results if r.name == name)

    def to_json(self) -> dict:
        return {"seed": self.seed, "ok": self.ok, "anomalies": self.anomalies, "checks": [r.to_json() for r in self.results]}

    def describe(self, limit: int = 10) -> str:
        lines = [f"verdict (seed {self.seed}): {'PASS' if self.ok else 'FAIL'}, {self.anomalies} anomalies"]
        for r in self.results:
            lines.append(f"  {'ok  ' if r.ok else 'FAIL'} {r.name}: {r.checked} checked, {len(r.anomalies)} anomalies"
                         f" ({CHECKS[r.name]})")
            if r.note:
                lines.append(f"       note: {r.note}")
            lines += [f"       {a}" for a in r.anomalies[:limit]]
            if len(r.anomalies) > limit:
                lines.append(f"       ... {len(r.anomalies) - limit} more in verdict.json")
        return "\n".join(lines)


def _where(e: dict) -> str:
    offset = e.get("offset")
    return f"{e['topic']}/{e['partition']}@{'?' if offset is None else offset}"


class _History:
    """The history's events sorted into what the checks look up."""

    def __init__(self, events):
        self.run = {}
        self.sends: dict[str, dict] = {}
        self.acks: list[dict] = []
        self.reads: dict[str, list[dict]] = defaultdict(list)  # isolation -> read events
        self.ends: dict[tuple[str, str, int], dict] = {}  # (isolation, topic, partition) -> end event
        self.polls: list[dict] = []
        self.txns: dict[str, list[dict]] = defaultdict(list)
        self.commits: list[dict] = []
        self.group_offsets: list[dict] = []
        self.notes: list[dict] = []
        for e in events:
            kind = e.get("type")
            if kind == "run":
                self.run = e
            elif kind == "send":
                self.sends[e["value"]] = e
            elif kind == "ack":
                self.acks.append(e)
            elif kind == "read":
                self.reads[e.get("isolation", READ_UNCOMMITTED)].append(e)
            elif kind == "end":
                self.ends[(e.get("isolation", READ_UNCOMMITTED), e["topic"], e["partition"])] = e
            elif kind == "poll":
                self.polls.append(e)
            elif kind == "txn":
                self.txns[e["txn"]].append(e)
            elif kind == "commit":
                self.commits.append(e)
            elif kind == "group_offsets":
                self.group_offsets.append(e)
            elif kind == "note":
                self.notes.append(e)
        self.transactional_topics = set(self.run.get("transactional_topics", ()))
        self.transactional_topics |= {s["topic"] for s in self.sends.values() if s.get("txn")}

    def read_back(self, isolation: str) -> dict[str, list[dict]]:
        """value -> its copies in the final read-back."""
        found = defaultdict(list)
        for e in self.reads[isolation]:
            found[e["value"]].append(e)
        return found

    def read_topics(self, isolation: str) -> set[str]:
        return {t for (i, t, _) in self.ends if i == isolation}

    def txn_outcomes(self) -> dict[str, tuple[str, list[str]]]:
        """txn -> (committed | aborted | unknown, its output values)."""
        outcomes = {}
        for txn, events in self.txns.items():
            values = [v for e in events for v in e.get("values", ())]
            values = list(dict.fromkeys(values))
            commits = [e for e in events if e["phase"] == "commit"]
            aborts = [e for e in events if e["phase"] == "abort"]
            if any(e.get("ok") for e in commits):
                outcome = "committed"
            elif commits or any(not e.get("ok") for e in aborts) or not aborts:
                outcome = "unknown"  # a commit that failed, an abort that failed, or never ended
            else:
                outcome = "aborted"
            outcomes[txn] = (outcome, values)
        return outcomes


def check(events) -> Verdict:
    h = _History(events)
    checks = [_acked_present, _no_duplicates, _producer_order, _poll_order, _offsets_contiguous, _read_committed_no_aborted,
              _transactions_whole, _processed_once, _group_offsets]
    return Verdict(h.run.get("seed"), [c(h) for c in checks])


def _acked_present(h: _History) -> CheckResult:
    r = CheckResult("acked_present")
    found = h.read_back(READ_UNCOMMITTED)
    read_topics = h.read_topics(READ_UNCOMMITTED)
    for ack in h.acks:
        if ack["topic"] not in read_topics or ack["topic"] in h.transactional_topics:
            continue
        r.checked += 1
        copies = found.get(ack["value"], [])
        if not copies:
            r.anomalies.append(f"lost: {ack['value']} acknowledged at {_where(ack)}, not in the read-back")
        elif not any(c["partition"] == ack["partition"] and ack.get("offset") in (None, c["offset"]) for c in copies):
            # offset None: acknowledged implicitly (librdkafka's delivery report for a batch whose
            # request failed while a later batch of the producer was acknowledged: persisted, offset unknown)
            r.anomalies.append(f"moved: {ack['value']} acknowledged at {_where(ack)}, read at "
                               f"{', '.join(_where(c) for c in copies)}")
    return r


def _no_duplicates(h: _History) -> CheckResult:
    r = CheckResult("no_duplicates")
    for isolation in (READ_UNCOMMITTED, READ_COMMITTED):
        for value, copies in h.read_back(isolation).items():
            r.checked += 1
            if len(copies) > 1:
                acked = "acknowledged" if any(a["value"] == value for a in h.acks) else "unacknowledged"
                r.anomalies.append(f"duplicated: {value} ({acked}) at {', '.join(_where(c) for c in copies)}"
                                   f" ({isolation})")
    return r


def _producer_order(h: _History) -> CheckResult:
    """Within a partition, a producer's records must be in the order it sent them (its `seq`)."""
    r = CheckResult("producer_order")
    by_partition = defaultdict(list)
    for e in h.reads[READ_UNCOMMITTED]:
        send = h.sends.get(e["value"])
        if send is not None and send.get("seq") is not None and not send.get("txn"):
            by_partition[(e["topic"], e["partition"])].append((e["offset"], send["producer"], send["seq"], e))
    for records in by_partition.values():
        last: dict[str, tuple[int, dict]] = {}
        for offset, producer, seq, e in sorted(records, key=lambda x: x[0]):
            r.checked += 1
            before = last.get(producer)
            if before is not None and seq < before[0]:
                r.anomalies.append(f"reordered: {before[1]['value']} at {_where(before[1])} before "
                                   f"{e['value']} at {_where(e)}, sent earlier")
            if before is None or seq > before[0]:
                last[producer] = (seq, e)
    return r


def _poll_order(h: _History) -> CheckResult:
    r = CheckResult("poll_order")
    last: dict[tuple, dict] = {}
    for e in h.polls:
        if not e.get("static"):
            continue
        key = (e.get("consumer"), e["topic"], e["partition"])
        r.checked += 1
        before = last.get(key)
        if before is not None and e["offset"] <= before["offset"]:
            r.anomalies.append(f"nonmonotonic poll: consumer {e.get('consumer')} saw {e['value']} at {_where(e)} after "
                               f"{before['value']} at {_where(before)}")
        last[key] = e
    return r


def _offsets_contiguous(h: _History) -> CheckResult:
    r = CheckResult("offsets_contiguous")
    offsets = defaultdict(list)
    for e in h.reads[READ_UNCOMMITTED]:
        offsets[(e["topic"], e["partition"])].append(e["offset"])
    for (isolation, topic, partition), end in sorted(h.ends.items()):
        if isolation != READ_UNCOMMITTED or topic in h.transactional_topics:
            continue
        seen = sorted(offsets[(topic, partition)])
        r.checked += len(seen)
        expected, missing = end.get("low", 0), []
        for offset in seen:
            if offset > expected:
                missing.append((expected, offset - 1))
            expected = max(expected, offset + 1)
        if expected < end["high"]:
            missing.append((expected, end["high"] - 1))
        for low, high in missing:
            span = f"{low}" if low == high else f"{low}..{high}"
            r.anomalies.append(f"gap: {topic}/{partition} offsets {span} missing (high watermark {end['high']})")
        for offset in sorted(o for o, n in Counter(seen).items() if n > 1):
            r.anomalies.append(f"offset twice: {topic}/{partition}@{offset}")
    return r


def _read_committed_no_aborted(h: _History) -> CheckResult:
    r = CheckResult("read_committed_no_aborted")
    aborted = {v: txn for txn, (outcome, values) in h.txn_outcomes().items() if outcome == "aborted" for v in values}
    seen = [e for e in h.polls if e.get("isolation") == READ_COMMITTED] + h.reads[READ_COMMITTED]
    for e in seen:
        r.checked += 1
        if e["value"] in aborted:
            how = "final read-back" if e["type"] == "read" else f"consumer {e.get('consumer')}"
            r.anomalies.append(f"aborted record seen: {e['value']} of aborted transaction {aborted[e['value']]} "
                               f"at {_where(e)} ({how})")
    return r


def _transactions_whole(h: _History) -> CheckResult:
    r = CheckResult("transactions_whole")
    if not h.read_topics(READ_COMMITTED):
        return r
    found = h.read_back(READ_COMMITTED)
    for txn, (outcome, values) in sorted(h.txn_outcomes().items()):
        if outcome == "aborted" or not values:
            continue
        r.checked += 1
        present = [v for v in values if v in found]
        if outcome == "committed" and len(present) < len(values):
            missing = [v for v in values if v not in found]
            r.anomalies.append(f"partial: committed transaction {txn} lacks {len(missing)} of its {len(values)} "
                               f"records: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
        elif outcome == "unknown" and 0 < len(present) < len(values):
            r.anomalies.append(f"partial: transaction {txn} (outcome unknown) shows {len(present)} of its "
                               f"{len(values)} records: {', '.join(present[:5])}")
    return r


def _processed_once(h: _History) -> CheckResult:
    r = CheckResult("processed_once")
    outputs = defaultdict(list)
    for e in h.reads[READ_COMMITTED]:
        if "|" in e["value"]:
            outputs[e["value"].rsplit("|", 1)[0]].append(e)
    for source, copies in sorted(outputs.items()):
        r.checked += 1
        if len(copies) > 1:
            r.anomalies.append(f"processed twice: input {source} in committed output "
                               f"{', '.join(c['value'] + ' at ' + _where(c) for c in copies)}")
    drained = [n for n in h.notes if n.get("what") == "drained"]
    if drained and drained[-1].get("ok"):
        topic = drained[-1]["input_topic"]
        for ack in h.acks:
            if ack["topic"] == topic and ack["value"] not in outputs:
                r.anomalies.append(f"never processed: input {ack['value']} ({_where(ack)}) not in the committed output")
    elif drained:  # a liveness matter, said so that a PASS is not read as exactly once
        stuck = [c for c in h.notes if c.get("what") == "txn call"]
        r.note = ("not drained: the processor did not catch up with the feeder, so only 'at most once' was checked"
                  + (f" (its last call: {stuck[-1]['call']} in {stuck[-1]['txn']})" if stuck else ""))
    return r


def _group_offsets(h: _History) -> CheckResult:
    r = CheckResult("group_offsets")
    last: dict[tuple, tuple[int, dict]] = {}
    for c in sorted((c for c in h.commits if c.get("ok")), key=lambda c: c["t"]):
        for partition, offset in c["offsets"].items():
            key = (c["group"], c["topic"], int(partition))
            r.checked += 1
            before = last.get(key)
            if before is not None and offset < before[0]:
                r.anomalies.append(f"backwards: group {c['group']} committed {c['topic']}/{partition} offset {offset} "
                                   f"(member {c.get('member')}) after {before[0]} (member {before[1].get('member')})")
            last[key] = (offset, c)
    for g in h.group_offsets:
        for partition, offset in g["offsets"].items():
            end = h.ends.get((READ_UNCOMMITTED, g["topic"], int(partition)))
            r.checked += 1
            if end is not None and offset > end["high"]:
                r.anomalies.append(f"past the end: group {g['group']} committed {g['topic']}/{partition} offset "
                                   f"{offset} > log end {end['high']}")
    return r
