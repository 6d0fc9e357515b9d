"""report.md, rendered from the Parquet tables alone (pyarrow; no Spark needed to re-render)."""

from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq

from . import plots

ROWS = 25  # longest table shown; the Parquet tables have every row


def read(out: Path, name: str) -> list[dict]:
    path = Path(out) / "tables" / f"{name}.parquet"
    return pq.read_table(path).to_pylist() if path.exists() else []


def render(out: Path, summary: dict) -> Path:
    out = Path(out)
    t = {name: read(out, name) for name in (
        "sources", "outcomes", "validate_only", "errors", "forwarding", "latency", "policy_rules",
        "policy_principals", "timeouts", "timeline", "malformed")}
    pictures = [p for p in (plots.timeline(t["timeline"], out / "timeline.png"),
                            plots.outcomes(t["outcomes"], out / "outcomes.png"),
                            plots.latency(t["latency"], out / "latency.png")) if p]
    s = summary
    lines = ["# Audit report", "",
             f"{s['events']:,} admin write events from {len(s['files'])} file(s); "
             f"{s['malformed']:,} malformed line(s) skipped.", ""]
    if s["events"]:
        lines += [f"- Time span: {_ts(s['first_ts'])} to {_ts(s['last_ts'])} (UTC)",
                  f"- {s['principals']} principal(s), {s['apis']} api(s), "
                  f"{s['receiving_brokers']} receiving broker(s)",
                  f"- Failed: {s['errors']:,} ({_pct(s['errors'], s['events'])}); "
                  f"validate_only: {s['validate_only']:,} ({_pct(s['validate_only'], s['events'])}); "
                  f"forwarded: {s['forwarded']:,} ({_pct(s['forwarded'], s['events'])})", ""]
    else:
        lines += ["No events: nothing to plot.", ""]
    lines += [f"![{p.stem}]({p.name})\n" for p in pictures]
    lines += _section("Outcomes per principal and api", ["principal", "api", "outcome", "events"],
                      t["outcomes"])
    lines += _section("validate_only share per api", ["api", "events", "validate_only", "share"],
                      t["validate_only"], share=("share",))
    lines += _section("Errors by code", ["error_code", "error_name", "events", "messages"], _by_code(t["errors"]))
    lines += _section("Errors with their messages", ["error_code", "error_name", "error_message", "events", "apis"],
                      t["errors"])
    lines += _section("Forwarded share per receiving broker",
                      ["receiving_broker", "events", "forwarded", "forwarded_share"], t["forwarding"],
                      share=("forwarded_share",))
    lines += _section("Latency percentiles (ms), direct vs forwarded",
                      ["api", "path", "events", "p50_ms", "p95_ms", "p99_ms", "max_ms"], t["latency"])
    lines += _section("Policy violations (POLICY_VIOLATION, 44) by rule", ["rule", "events", "principals"],
                      t["policy_rules"])
    lines += _section("Policy violations by principal", ["principal", "rule", "events"], t["policy_principals"])
    lines += _section("Requests that hit REQUEST_TIMED_OUT (7)",
                      ["time", "principal", "receiving_broker", "forwarded_by", "api", "action",
                       "resource_name", "latency_ms"], t["timeouts"])
    lines += _section("Writes and errors per minute", ["minute", "writes", "errors", "validate_only"],
                      t["timeline"])
    lines += _section("Input files", ["source", "lines", "events", "malformed", "first_event", "last_event"],
                      t["sources"])
    if t["malformed"]:
        lines += _section("Malformed lines (first ones)", ["source", "line"],
                          [{**r, "line": _clip(r["line"], 100)} for r in t["malformed"]], limit=5)
    lines += ["Tables (Parquet, every row): " + ", ".join(
        f"`tables/{n}.parquet`" for n in sorted(t)) + ". Totals: `summary.json`.", ""]
    report = out / "report.md"
    report.write_text("\n".join(lines))
    return report


def _by_code(errors: list[dict]) -> list[dict]:
    codes: dict[int, dict] = {}
    for r in errors:
        row = codes.setdefault(r["error_code"], {**r, "events": 0, "messages": 0})
        row["events"] += r["events"]
        row["messages"] += 1
    return sorted(codes.values(), key=lambda r: (-r["events"], r["error_code"]))


def _section(title: str, columns: list[str], rows: list[dict], share: tuple = (), limit: int = ROWS) -> list[str]:
    out = [f"## {title}", ""]
    if not rows:
        return out + ["None.", ""]
    out += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows[:limit]:
        out.append("| " + " | ".join(_cell(row.get(c), c in share) for c in columns) + " |")
    if len(rows) > limit:
        out.append(f"\n{len(rows) - limit:,} more row(s) in the Parquet table.")
    return out + [""]


def _cell(value, share: bool) -> str:
    if value is None:
        return ""
    if share:
        return f"{value:.1%}"
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}" if abs(value) >= 10000 else str(value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def _clip(text: str | None, width: int) -> str:
    text = text or ""
    return "`" + (text if len(text) <= width else text[:width - 1] + "…").replace("`", "'") + "`"


def _ts(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"
