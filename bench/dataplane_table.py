"""The data-plane table: figures from several rounds against fauxka and Tansu become medians,
ratios, rows with targets, and a section of bench/README.md. Pure: no sockets, no clients.

A round is {"fauxka": {key: value}, "tansu": {key: value}}; a value is a number or, where the
figure does not apply, a string saying why ("no Produce", "1 node"), shown as "n/a (why)".
"""

import statistics

Value = float | str
SIDES = ("fauxka", "tansu")
SIZES = (100, 1024)
SECTION = "## Data plane: fauxka against Tansu"
PRODUCE_FLOOR = 500_000  # rec/s, 100 B, acks=1 RF1
TANSU_SHARE = 0.8
CONSUME_FLOOR = 1_000_000
ACKS_ALL_SHARE = 0.5
LATENCY_P50_MS = 1.0
LATENCY_TANSU_RATIO = 1.0  # issue 25: produce latency p50 as low as the Rust broker's
FAILOVER_PAST_SESSION_S = 1.0  # issue 25 (issue 14 had 1.5)
RSS_MB = 150


def size_name(size: int) -> str:
    return "1 KiB" if size == 1024 else f"{size} B"


def _median(values: list[Value]) -> Value | None:
    reasons = [v for v in values if isinstance(v, str)]
    if reasons:
        return reasons[0]
    return statistics.median(values) if values else None


def aggregate(rounds: list[dict[str, dict[str, Value]]]) -> tuple[dict[str, dict[str, Value]], dict[str, float]]:
    """(median per side and key, median per key of the rounds' fauxka / Tansu ratios). A key a
    round lacks is left out of that round; a ratio needs numbers on both sides of a round."""
    medians: dict[str, dict[str, Value]] = {}
    for side in SIDES:
        keys = {k for r in rounds for k in r.get(side, {})}
        medians[side] = {k: _median([r[side][k] for r in rounds if k in r.get(side, {})]) for k in sorted(keys)}
    ratios: dict[str, float] = {}
    for key in set(medians["fauxka"]) & set(medians["tansu"]):
        per_round = [r["fauxka"][key] / r["tansu"][key] for r in rounds
                     if isinstance(r.get("fauxka", {}).get(key), (int, float))
                     and isinstance(r.get("tansu", {}).get(key), (int, float)) and r["tansu"][key]]
        if per_round:
            ratios[key] = statistics.median(per_round)
    return medians, ratios


def _number(value: Value | None) -> float | None:
    return value if isinstance(value, (int, float)) else None


def _show(value: Value | None, fmt) -> str:
    if value is None:
        return ""
    return f"n/a ({value})" if isinstance(value, str) else fmt(value)


def _rate(size: int):
    return lambda v: f"{v:,.0f} rec/s ({v * size / 1e6:.1f} MB/s)"


def _verdict(text: str, met: bool | None) -> str:
    return text if met is None else f"{text}: {'met' if met else 'missed'}"


def _pair(side: dict[str, Value], a: str, b: str) -> str:
    x, y = side.get(a), side.get(b)
    if isinstance(x, str) or isinstance(y, str) or x is None or y is None:
        return _show(x if isinstance(x, str) or x is None else y, str)
    return f"{x:.2f} / {y:.2f} ms"


def _ratio(ratios: dict[str, float], *keys: str) -> str:
    if not all(k in ratios for k in keys):
        return ""
    return " / ".join(f"{ratios[k]:.2f}x" if ratios[k] >= 0.1 else f"{ratios[k]:.2g}x" for k in keys)


def rows(medians: dict[str, dict[str, Value]], ratios: dict[str, float],
         session_s: float) -> list[tuple[str, str, str, str, str]]:
    """(measure, fauxka, Tansu, fauxka / Tansu, target) for each figure, the target marked met
    or missed from fauxka's median where fauxka has the figure."""
    f, t = medians["fauxka"], medians["tansu"]
    out = []
    for size in SIZES:
        key = f"produce_{size}_1"
        text, met = "", None
        if size == 100:
            text = f">= {PRODUCE_FLOOR:,} rec/s and >= {TANSU_SHARE}x Tansu"
            if _number(f.get(key)) is not None:
                met = f[key] >= PRODUCE_FLOOR and ratios.get(key, TANSU_SHARE) >= TANSU_SHARE
        out.append((f"produce {size_name(size)}, acks=1 RF1", _show(f.get(key), _rate(size)),
                    _show(t.get(key), _rate(size)), _ratio(ratios, key), _verdict(text, met)))
    for size in SIZES:
        key, base = f"produce_{size}_all", f"produce_{size}_1"
        met = None
        if _number(f.get(key)) is not None and _number(f.get(base)) is not None:
            met = f[key] >= ACKS_ALL_SHARE * f[base]
        out.append((f"produce {size_name(size)}, acks=all RF3", _show(f.get(key), _rate(size)),
                    _show(t.get(key), _rate(size)), _ratio(ratios, key),
                    _verdict(f">= {ACKS_ALL_SHARE}x acks=1", met)))
    for size in SIZES:
        key = f"consume_{size}"
        text, met = "", None
        if size == 100:
            text = f">= {CONSUME_FLOOR:,} rec/s"
            met = None if _number(f.get(key)) is None else f[key] >= CONSUME_FLOOR
        out.append((f"consume {size_name(size)} (RF1)", _show(f.get(key), _rate(size)),
                    _show(t.get(key), _rate(size)), _ratio(ratios, key), _verdict(text, met)))
    met = None if _number(f.get("produce_p50")) is None else f["produce_p50"] < LATENCY_P50_MS
    as_tansu = None if "produce_p50" not in ratios else ratios["produce_p50"] <= LATENCY_TANSU_RATIO
    out.append(("produce latency p50 / p99 (100 B, acks=1, linger 0)", _pair(f, "produce_p50", "produce_p99"),
                _pair(t, "produce_p50", "produce_p99"), _ratio(ratios, "produce_p50", "produce_p99"),
                _verdict(f"p50 < {LATENCY_P50_MS:g} ms", met) + "; "
                + _verdict(f"p50 <= {LATENCY_TANSU_RATIO:g}x Tansu (issue 25)", as_tansu)))
    out.append(("produce-to-consume latency p50 / p99", _pair(f, "e2e_p50", "e2e_p99"), _pair(t, "e2e_p50", "e2e_p99"),
                _ratio(ratios, "e2e_p50", "e2e_p99"), ""))
    limit = session_s + FAILOVER_PAST_SESSION_S
    met = None if _number(f.get("failover_s")) is None else f["failover_s"] <= limit
    out.append((f"failover: leader SIGKILLed to first acks=all produce (session {session_s:g} s)",
                _show(f.get("failover_s"), lambda v: f"{v:.2f} s"), _show(t.get("failover_s"), lambda v: f"{v:.2f} s"),
                _ratio(ratios, "failover_s"),
                _verdict(f"<= {limit:g} s (session + {FAILOVER_PAST_SESSION_S:g} s)", met)))
    if "failover_broker_s" in f:
        out.append(("  of which the brokers': kill to a surviving broker's Metadata naming the new leader",
                    _show(f.get("failover_broker_s"), lambda v: f"{v:.2f} s"),
                    _show(t.get("failover_broker_s"), lambda v: f"{v:.2f} s"), "", ""))
    met = None if _number(f.get("rss_mb")) is None else f["rss_mb"] < RSS_MB
    out.append(("broker RSS while serving the load (max)", _show(f.get("rss_mb"), lambda v: f"{v:.0f} MB"),
                _show(t.get("rss_mb"), lambda v: f"{v:.0f} MB"), _ratio(ratios, "rss_mb"),
                _verdict(f"< {RSS_MB} MB", met)))
    return out


def markdown(table_rows: list[tuple[str, ...]]) -> list[str]:
    return ["| measure | fauxka | Tansu | fauxka / Tansu | target |", "|---|---|---|---|---|",
            *(f"| {' | '.join(row)} |" for row in table_rows)]


def splice(readme: str, section: str) -> str:
    """`readme` with its data-plane section (from SECTION to the end) replaced by `section`,
    or `section` appended when it has none."""
    head = readme.split(SECTION, 1)[0].rstrip("\n")
    return f"{head}\n\n{section.strip()}\n" if head else f"{section.strip()}\n"


def hand_run_sections(readme: str) -> str:
    """The README's hand-run sections ("## ..." headings saying "hand-run"), verbatim and in
    order: a full `bench/run` regenerates the rest and keeps these (their figures come from
    commands it does not run, e.g. paired runs against older code)."""
    kept, keep = [], False
    for line in readme.split(SECTION, 1)[0].splitlines():
        if line.startswith("## "):
            keep = "hand-run" in line
        if keep:
            kept.append(line)
    return "\n".join(kept).strip("\n")
