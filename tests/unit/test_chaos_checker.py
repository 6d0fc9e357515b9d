"""The chaos checker over hand-written histories: clean ones pass, broken ones fail naming the
records (fauxka/chaos/checker.py is pure: no cluster)."""

from fauxka.chaos import check

T = "orders"


def _run(**extra):
    return {"t": 0, "type": "run", "seed": 42, **extra}


def _produced(producer, seqs, partition=0, offsets=None, acked=True):
    """Sends and acks of producer's records `seqs` in one partition at `offsets` (default 0, 1, ...)."""
    events = []
    offsets = offsets if offsets is not None else list(range(len(seqs)))
    for seq, offset in zip(seqs, offsets):
        value = f"{producer}-{seq}"
        events.append({"t": 1 + seq, "type": "send", "producer": producer, "seq": seq, "value": value, "topic": T,
                       "partition": partition})
        if acked:
            events.append({"t": 1.5 + seq, "type": "ack", "value": value, "topic": T, "partition": partition,
                           "offset": offset})
    return events


def _read(values_at, partition=0, isolation="read_uncommitted", topic=T, high=None, low=0):
    """Read-back events for [(offset, value)], and the partition's end."""
    events = [{"t": 100, "type": "read", "isolation": isolation, "topic": topic, "partition": partition,
               "offset": o, "value": v} for o, v in values_at]
    end = high if high is not None else (max((o for o, _ in values_at), default=-1) + 1)
    events.append({"t": 101, "type": "end", "isolation": isolation, "topic": topic, "partition": partition,
                   "low": low, "high": end})
    return events


def _failing(verdict):
    return {r.name: r.anomalies for r in verdict.results if not r.ok}


def test_a_clean_history_passes():
    events = [_run()] + _produced("p0", [0, 1, 2]) + _read([(0, "p0-0"), (1, "p0-1"), (2, "p0-2")])
    verdict = check(events)
    assert verdict.ok, verdict.describe()
    assert verdict.result("acked_present").checked == 3
    assert "seed 42" in verdict.describe() and "PASS" in verdict.describe()


def test_a_lost_acknowledged_record_is_named():
    events = [_run()] + _produced("p0", [0, 1, 2]) + _read([(0, "p0-0"), (1, "p0-2")], high=2)
    failing = _failing(check(events))
    assert failing["acked_present"] == [
        "lost: p0-1 acknowledged at orders/0@1, not in the read-back",
        "moved: p0-2 acknowledged at orders/0@2, read at orders/0@1"]


def test_a_duplicated_record_is_named_with_both_offsets():
    events = [_run()] + _produced("p0", [0, 1]) + _read([(0, "p0-0"), (1, "p0-1"), (2, "p0-1")])
    failing = _failing(check(events))
    assert failing["no_duplicates"] == ["duplicated: p0-1 (acknowledged) at orders/0@1, orders/0@2 (read_uncommitted)"]
    assert "producer_order" not in failing


def test_an_unacknowledged_record_twice_is_a_duplicate_too():
    events = [_run()] + _produced("p0", [0], acked=False) + _read([(0, "p0-0"), (1, "p0-0")])
    assert _failing(check(events))["no_duplicates"] == [
        "duplicated: p0-0 (unacknowledged) at orders/0@0, orders/0@1 (read_uncommitted)"]


def test_an_unacknowledged_record_may_be_there_once_or_not_at_all():
    events = [_run()] + _produced("p0", [0, 1], acked=False) + _read([(0, "p0-1")])
    assert check(events).ok


def test_reordered_records_of_one_producer_are_named():
    events = [_run()] + _produced("p0", [0, 1, 2], offsets=[0, 2, 1]) + _read([(0, "p0-0"), (1, "p0-2"), (2, "p0-1")])
    failing = _failing(check(events))
    assert failing["producer_order"] == ["reordered: p0-2 at orders/0@1 before p0-1 at orders/0@2, sent earlier"]


def test_two_producers_interleaving_is_no_reordering():
    events = ([_run()] + _produced("p0", [0, 1], offsets=[0, 2]) + _produced("p1", [0, 1], offsets=[1, 3])
              + _read([(0, "p0-0"), (1, "p1-0"), (2, "p0-1"), (3, "p1-1")]))
    assert check(events).ok


def test_an_offset_gap_is_named_unless_the_topic_has_transactions():
    events = [_run()] + _produced("p0", [0, 1], offsets=[0, 3]) + _read([(0, "p0-0"), (3, "p0-1")], high=5)
    assert _failing(check(events))["offsets_contiguous"] == [
        "gap: orders/0 offsets 1..2 missing (high watermark 5)", "gap: orders/0 offsets 4 missing (high watermark 5)"]
    events[0] = _run(transactional_topics=[T])
    assert "offsets_contiguous" not in _failing(check(events))


def test_an_implicit_acknowledgement_needs_the_record_somewhere_in_its_partition():
    events = [_run()] + _produced("p0", [0, 1]) + _read([(0, "p0-0"), (1, "p0-1")])
    events[4]["offset"] = None  # librdkafka: persisted, offset unknown
    assert check(events).ok
    events = [_run()] + _produced("p0", [0, 1]) + _read([(0, "p0-0")], high=1)
    events[4]["offset"] = None
    assert _failing(check(events))["acked_present"] == ["lost: p0-1 acknowledged at orders/0@?, not in the read-back"]


def _txn(txn, values, outcome):
    events = [{"t": 10, "type": "txn", "phase": "begin", "txn": txn, "values": values}]
    if outcome == "committed":
        events.append({"t": 11, "type": "txn", "phase": "commit", "txn": txn, "ok": True})
    elif outcome == "aborted":
        events.append({"t": 11, "type": "txn", "phase": "abort", "txn": txn, "ok": True})
    elif outcome == "unknown":
        events.append({"t": 11, "type": "txn", "phase": "commit", "txn": txn, "ok": False, "error": "_TIMED_OUT"})
    return events


def test_read_committed_showing_an_aborted_record_is_named():
    out = "out"
    events = ([_run(transactional_topics=[out])] + _txn("t-1", ["i-0|t-1", "i-1|t-1"], "committed")
              + _txn("t-2", ["i-2|t-2"], "aborted") + _txn("t-3", ["i-2|t-3"], "committed")
              + [{"t": 12, "type": "poll", "consumer": "reader", "isolation": "read_committed", "topic": out,
                  "partition": 0, "offset": 3, "value": "i-2|t-2"}]
              + _read([(0, "i-0|t-1"), (1, "i-1|t-1"), (5, "i-2|t-3")], topic=out, isolation="read_committed"))
    failing = _failing(check(events))
    assert failing == {"read_committed_no_aborted": [
        "aborted record seen: i-2|t-2 of aborted transaction t-2 at out/0@3 (consumer reader)"]}


def test_a_committed_transaction_seen_in_part_is_named():
    out = "out"
    events = ([_run(transactional_topics=[out])] + _txn("t-1", ["i-0|t-1", "i-1|t-1"], "committed")
              + _txn("t-2", ["i-2|t-2", "i-3|t-2"], "unknown")
              + _read([(0, "i-0|t-1"), (3, "i-2|t-2")], topic=out, isolation="read_committed"))
    assert _failing(check(events))["transactions_whole"] == [
        "partial: committed transaction t-1 lacks 1 of its 2 records: i-1|t-1",
        "partial: transaction t-2 (outcome unknown) shows 1 of its 2 records: i-2|t-2"]


def test_an_input_processed_by_two_committed_transactions_is_named():
    out = "out"
    events = ([_run(transactional_topics=[out])] + _txn("t-1", ["i-0|t-1"], "committed")
              + _txn("t-2", ["i-0|t-2"], "committed")
              + _read([(0, "i-0|t-1"), (2, "i-0|t-2")], topic=out, isolation="read_committed"))
    assert _failing(check(events))["processed_once"] == [
        "processed twice: input i-0 in committed output i-0|t-1 at out/0@0, i-0|t-2 at out/0@2"]


def test_an_undrained_run_says_exactly_once_was_not_checked_and_the_stuck_call():
    out, note = "out", {"type": "note", "what": "drained", "input_topic": "in"}
    events = ([_run(transactional_topics=[out])] + _txn("t-1", ["i-0|t-1"], "committed")
              + [{"t": 5, "type": "note", "what": "txn call", "call": "send_offsets_to_transaction", "txn": "t-2"},
                 {**note, "t": 9, "ok": False}]
              + _read([(0, "i-0|t-1")], topic=out, isolation="read_committed"))
    result = check(events).result("processed_once")
    assert result.ok and result.note == ("not drained: the processor did not catch up with the feeder, so only "
                                         "'at most once' was checked (its last call: send_offsets_to_transaction in t-2)")
    assert "note: not drained" in check(events).describe()
    assert check(events[:-2] + [{**note, "t": 9, "ok": True}] + events[-1:]).result("processed_once").note == ""


def test_group_offsets_going_backwards_or_past_the_end_are_named():
    commit = {"type": "commit", "group": "g", "topic": T, "ok": True}
    events = ([_run()] + _read([(0, "a"), (1, "b"), (2, "c")])
              + [{**commit, "t": 1, "member": "m1", "offsets": {"0": 2}},
                 {**commit, "t": 2, "member": "m2", "offsets": {"0": 1}},
                 {**commit, "t": 3, "member": "m2", "offsets": {"0": 3}, "ok": False},
                 {"t": 4, "type": "group_offsets", "group": "g", "topic": T, "offsets": {"0": 7}}])
    assert _failing(check(events))["group_offsets"] == [
        "backwards: group g committed orders/0 offset 1 (member m2) after 2 (member m1)",
        "past the end: group g committed orders/0 offset 7 > log end 3"]


def test_a_consumer_that_never_seeks_going_backwards_is_named():
    poll = {"type": "poll", "consumer": "reader", "isolation": "read_committed", "topic": T, "partition": 0,
            "static": True}
    events = [_run(), {**poll, "t": 1, "offset": 4, "value": "a"}, {**poll, "t": 2, "offset": 7, "value": "b"},
              {**poll, "t": 3, "offset": 5, "value": "c"}, {**poll, "t": 4, "offset": 2, "value": "d", "static": False}]
    assert _failing(check(events)) == {"poll_order": [
        "nonmonotonic poll: consumer reader saw c at orders/0@5 after b at orders/0@7"]}
