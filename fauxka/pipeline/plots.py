"""The report's pictures (matplotlib, no pyplot state): each function writes one PNG, or returns
None when there is nothing to draw."""

from collections import defaultdict
from datetime import timedelta
from pathlib import Path

import matplotlib.dates as mdates
from matplotlib.figure import Figure

OK_COLOR, ERROR_COLOR = "#4c9f70", "#d1495b"
PATH_COLORS = {"direct": "#30638e", "forwarded": "#edae49"}
ERROR_PALETTE = ["#d1495b", "#edae49", "#8d6a9f", "#00798c", "#c2847a", "#6b717e", "#e07a5f", "#3d405b"]
MAX_FILLED_MINUTES = 24 * 60  # a longer span is drawn as the minutes that have events, side by side
MIN_MINUTES_SHOWN = 10
DPI = 110


def timeline(rows: list[dict], path: Path) -> Path | None:
    """Writes per minute, the failed ones stacked in red on the successful ones."""
    if not rows:
        return None
    fig = Figure(figsize=(10, 3.8), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    first, last = rows[0]["minute"], rows[-1]["minute"]
    span = int((last - first).total_seconds() // 60) + 1
    gapless = span <= MAX_FILLED_MINUTES
    if gapless:
        by_minute = {r["minute"]: r for r in rows}
        minutes = [first + timedelta(minutes=i) for i in range(span)]
        rows = [by_minute.get(m, {"minute": m, "writes": 0, "errors": 0}) for m in minutes]
        x, width = minutes, timedelta(minutes=0.85)
    else:
        x, width = [i - 0.425 for i in range(len(rows))], 0.85
    failed = [r["errors"] for r in rows]
    succeeded = [r["writes"] - r["errors"] for r in rows]
    ax.bar(x, succeeded, width=width, color=OK_COLOR, label="succeeded", align="edge")
    ax.bar(x, failed, width=width, bottom=succeeded, color=ERROR_COLOR, label="failed", align="edge")
    if gapless:
        pad = timedelta(minutes=max(1, (MIN_MINUTES_SHOWN - span) // 2))  # one busy minute is not a wall
        ax.set_xlim(first - pad, last + timedelta(minutes=1) + pad)
        locator = mdates.AutoDateLocator(minticks=3, maxticks=12)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.set_xlabel("minute (UTC)")
    else:
        step = max(1, len(rows) // 10)
        ax.set_xticks(range(0, len(rows), step), [r["minute"].strftime("%m-%d %H:%M") for r in rows[::step]],
                      rotation=30, ha="right")
        ax.set_xlabel("minute (UTC); minutes without events left out")
    total, errors = sum(r["writes"] for r in rows), sum(failed)
    ax.set_title(f"Admin writes per minute: {total:,} writes, {errors:,} failed")
    ax.set_ylabel("writes")
    fig.legend(loc="outside right upper", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.savefig(path)
    return path


def latency(rows: list[dict], path: Path) -> Path | None:
    """Per api, p50 (circle) to p99 (square) with p95 (triangle), direct vs forwarded."""
    if not rows:
        return None
    apis = sorted({r["api"] for r in rows}, reverse=True)
    fig = Figure(figsize=(10, 1.2 + 0.55 * len(apis)), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    offsets = {"direct": -0.14, "forwarded": 0.14}
    labelled = set()
    for r in rows:
        y = apis.index(r["api"]) + offsets.get(r["path"], 0)
        color = PATH_COLORS.get(r["path"], "gray")
        label = None if r["path"] in labelled else r["path"]
        labelled.add(r["path"])
        ax.plot([r["p50_ms"], r["p99_ms"]], [y, y], color=color, linewidth=3, alpha=0.6, label=label)
        for key, marker in (("p50_ms", "o"), ("p95_ms", "^"), ("p99_ms", "s")):
            ax.plot([r[key]], [y], marker=marker, color=color, markersize=7)
        ax.annotate(f"p99 {_ms(r['p99_ms'])}  (n={r['events']:,})", (r["p99_ms"], y),
                    xytext=(8, -4), textcoords="offset points", fontsize=8)
    values = [r[k] for r in rows for k in ("p50_ms", "p99_ms") if r[k] and r[k] > 0]
    if values and max(values) / min(values) > 20:
        ax.set_xscale("log")
    ax.set_yticks(range(len(apis)), apis)
    ax.set_ylim(-0.6, len(apis) - 0.4)
    ax.margins(x=0.25)
    ax.set_xlabel("latency (ms): ● p50   ▲ p95   ■ p99")
    ax.set_title("Latency per api, direct vs forwarded")
    fig.legend(loc="outside right upper", frameon=False)
    ax.grid(axis="x", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    fig.savefig(path)
    return path


def outcomes(rows: list[dict], path: Path) -> Path | None:
    """Per api, one bar of its events split by outcome (OK, then each error name)."""
    if not rows:
        return None
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        counts[r["api"]][r["outcome"]] += r["events"]
    apis = sorted(counts, key=lambda a: sum(counts[a].values()))
    names = sorted({o for c in counts.values() for o in c}, key=lambda o: (o != "OK", o))
    fig = Figure(figsize=(10, 1.4 + 0.5 * len(apis)), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    left = [0] * len(apis)
    errors = iter(ERROR_PALETTE * 4)
    for name in names:
        widths = [counts[a].get(name, 0) for a in apis]
        ax.barh(apis, widths, left=left, color=OK_COLOR if name == "OK" else next(errors), label=name)
        left = [a + b for a, b in zip(left, widths)]
    for i, total in enumerate(left):
        ax.annotate(f"{total:,}", (total, i), xytext=(4, -3), textcoords="offset points", fontsize=8)
    ax.set_xlabel("events")
    ax.set_title("Outcomes per api")
    fig.legend(loc="outside right upper", frameon=False, fontsize=8)
    ax.margins(x=0.08)
    ax.spines[["top", "right"]].set_visible(False)
    fig.savefig(path)
    return path


def _ms(value: float) -> str:
    return f"{value / 1000:,.1f} s" if value >= 1000 else f"{value:.1f} ms"
