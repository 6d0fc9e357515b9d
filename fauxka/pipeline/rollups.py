"""The tables that are sums over `counts` (tables.Frames), rolled up on the driver with pyarrow,
and the sort every table is written in.

Spark reduces the events to `counts`: one row per source and combination of the dimensions
(principal, api, error code, validate_only, receiving broker, forwarded, policy rule) with its
number of lines `n` and the time span of its events. That is a few thousand rows for a million
events, so adding it up again per table here costs milliseconds where each table as a Spark
query of its own cost a second or more of planning, code generation and scheduling.
"""

from decimal import ROUND_HALF_UP, Decimal

import pyarrow as pa
import pyarrow.compute as pc

from .schema import error_name


def sort(table: pa.Table, order: list[str]) -> pa.Table:
    """`table` in the order `order` names ("-column" descending), nulls where Spark puts them:
    first when ascending, last when descending."""
    keys, names = [], table.column_names
    for i, spec in enumerate(order):
        name, direction = spec.lstrip("-"), "descending" if spec.startswith("-") else "ascending"
        if table.column(name).null_count:  # is_valid: False (null) sorts first ascending, last descending
            table = table.append_column(f"__valid_{i}", pc.is_valid(table.column(name)))
            keys.append((f"__valid_{i}", direction))
        keys.append((name, direction))
    return table.sort_by(keys).select(names) if keys and table.num_rows > 1 else table.select(names)


def _share(part: pa.Array, whole: pa.Array) -> pa.Array:
    """part / whole to 4 decimals, half up (Spark's round)."""
    return pa.array([None if w in (None, 0) else float(Decimal(repr(p / w)).quantize(Decimal("0.0001"), ROUND_HALF_UP))
                     for p, w in zip(part.to_pylist(), whole.to_pylist())], pa.float64())


def _where(counts: pa.Table, column: str) -> pa.Array:
    """n where `column` is true (null counts as false), else 0."""
    return pc.if_else(pc.fill_null(counts[column], False), counts["n"], pa.scalar(0, pa.int64()))


def _events(counts: pa.Table) -> pa.Table:
    return counts.filter(pc.invert(counts["malformed"]))


def _sum(table: pa.Table, keys: list[str], sums: dict[str, pa.Array], **more: tuple[str, str]) -> pa.Table:
    """Group `table` by `keys`: each array of `sums` added up under its name, then `more`
    (name: (column, pyarrow aggregation)); columns in the order keys, sums, more."""
    for name, values in sums.items():
        table = table.append_column(f"__{name}", values)
    aggs = [(f"__{name}", "sum") for name in sums] + [(c, how) for c, how in more.values()]
    grouped = table.group_by(keys).aggregate(aggs)
    out = {k: grouped[k] for k in keys}
    out |= {name: grouped[f"__{name}_sum"] for name in sums}
    out |= {name: grouped[f"{c}_{how}"] for name, (c, how) in more.items()}
    return pa.table(out)


def sources(counts: pa.Table) -> pa.Table:
    """Per input file: lines, events, malformed lines and the time span of its events."""
    good = pc.invert(counts["malformed"])
    return _sum(counts, ["source"], {"lines": counts["n"], "events": pc.if_else(good, counts["n"], 0),
                                     "malformed": _where(counts, "malformed")},
                first_event=("first_event", "min"), last_event=("last_event", "max"))


def outcomes(counts: pa.Table) -> pa.Table:
    t = _sum(_events(counts), ["principal", "api", "error_code"], {"events": _events(counts)["n"]})
    outcome = pa.array(["OK" if c == 0 else error_name(c) for c in t["error_code"].to_pylist()], pa.string())
    return t.select(["principal", "api"]).append_column("outcome", outcome).append_column(
        "error_code", t["error_code"]).append_column("events", t["events"])


def validate_only(counts: pa.Table) -> pa.Table:
    events = _events(counts)
    t = _sum(events, ["api"], {"events": events["n"], "validate_only": _where(events, "validate_only")})
    return t.append_column("share", _share(t["validate_only"], t["events"]))


def forwarding(counts: pa.Table) -> pa.Table:
    events = _events(counts)
    t = _sum(events, ["receiving_broker"], {"events": events["n"], "forwarded": _where(events, "forwarded")})
    return t.append_column("forwarded_share", _share(t["forwarded"], t["events"]))


def _violations(counts: pa.Table) -> pa.Table:
    events = _events(counts)
    return events.filter(pc.is_valid(events["rule"]))


def policy_rules(counts: pa.Table) -> pa.Table:
    v = _violations(counts)
    return _sum(v, ["rule"], {"events": v["n"]}, principals=("principal", "count_distinct"))


def policy_principals(counts: pa.Table) -> pa.Table:
    v = _violations(counts)
    return _sum(v, ["principal", "rule"], {"events": v["n"]})


def errors(failed: pa.Table) -> pa.Table:
    """tables.errors' (error_code, error_message, api, events) per code and message: the events
    added up, the apis joined in order ("create_partitions, create_topics")."""
    by_api = failed.sort_by([("error_code", "ascending"), ("error_message", "ascending"), ("api", "ascending")])
    t = by_api.group_by(["error_code", "error_message"], use_threads=False).aggregate(  # keeps the apis' order
        [("events", "sum"), ("api", "list")])
    names = pa.array([error_name(c) for c in t["error_code"].to_pylist()], pa.string())
    return pa.table({"error_code": t["error_code"], "error_name": names, "error_message": t["error_message"],
                     "events": t["events_sum"], "apis": pc.binary_join(t["api_list"], ", ")})


ROLLUPS = {"sources": sources, "outcomes": outcomes, "validate_only": validate_only, "forwarding": forwarding,
           "policy_rules": policy_rules, "policy_principals": policy_principals}


def totals(counts: pa.Table) -> dict:
    """The summary: lines, events, malformed, principals, apis, brokers, errors, time span."""
    events = _events(counts)

    def distinct(column: str) -> int:
        return len(pc.unique(events[column].drop_null()))

    def total(values) -> int:
        return int(pc.sum(values).as_py() or 0)

    failed = pc.if_else(pc.not_equal(events["error_code"], 0), events["n"], 0)
    return {"lines": total(counts["n"]), "events": total(events["n"]), "malformed": total(_where(counts, "malformed")),
            "principals": distinct("principal"), "apis": distinct("api"),
            "receiving_brokers": distinct("receiving_broker"),
            "errors": total(failed), "validate_only": total(_where(events, "validate_only")),
            "forwarded": total(_where(events, "forwarded")),
            "first_ts": pc.min(events["first_ts"]).as_py(), "last_ts": pc.max(events["last_ts"]).as_py()}
