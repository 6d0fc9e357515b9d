"""The run as one picture (matplotlib): faults as coloured bands across both panels (the step
number on top), acknowledged records per second above, acknowledgement latency (median and max
per second) below, failed deliveries as red ticks, the verdict in the title."""

from collections import defaultdict
from pathlib import Path

COLOURS = {"kill": "#d62728", "pause": "#ff7f0e", "restart": "#8c564b", "link": "#9467bd", "zookeeper": "#17becf",
           "replication": "#bcbd22", "storage": "#7f7f7f", "leader": "#2ca02c", "coordinator": "#1f77b4"}


def draw(events: list[dict], verdict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    t0 = min(e["t"] for e in events)
    sends = {e["value"]: e["t"] for e in events if e["type"] == "send"}
    acks_per_s, latencies, fails, commits = defaultdict(int), defaultdict(list), [], defaultdict(int)
    for e in events:
        second = int(e["t"] - t0)
        if e["type"] == "ack":
            acks_per_s[second] += 1
            if e["value"] in sends:
                latencies[second].append((e["t"] - sends[e["value"]]) * 1000)
        elif e["type"] == "fail":
            fails.append(e["t"] - t0)
        elif e["type"] == "txn" and e["phase"] == "commit" and e.get("ok"):
            commits[second] += 1
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(14, 7), sharex=True, gridspec_kw={"height_ratios": [1, 1]})
    starts = {}
    used = set()
    for e in events:
        if e["type"] != "fault":
            continue
        if e["phase"] == "start":
            starts[e["step"]] = e
        elif e["phase"] == "end" and e["step"] in starts:
            s = starts.pop(e["step"])
            _band(top, bottom, s, s["t"] - t0, max(e["t"] - t0, s["t"] - t0 + 0.3))
            used.add(s["nemesis"])
    end = max(e["t"] for e in events) - t0
    for s in starts.values():  # never healed: to the end
        _band(top, bottom, s, s["t"] - t0, end)
        used.add(s["nemesis"])
    seconds = list(range(int(end) + 1))  # a second without acks is a 0, not a line across the gap
    top.plot(seconds, [acks_per_s[s] for s in seconds], color="black", lw=1, label="acks/s")
    if commits:  # on their own scale: a few per second beside hundreds of acks
        right = top.twinx()
        right.plot(seconds, [commits[s] for s in seconds], color="#1f77b4", lw=1, ls="--")
        right.set_ylabel("committed transactions/s", color="#1f77b4")
        top.plot([], [], color="#1f77b4", lw=1, ls="--", label="committed transactions/s (right)")
    if fails:
        top.plot(fails, [0] * len(fails), "|", color="red", ms=12, label="failed deliveries")
    top.set_ylabel("per second")
    nan = float("nan")  # a second without acks: a gap in the line
    bottom.plot(seconds, [_median(latencies[s]) if latencies[s] else nan for s in seconds], ".-", color="black", lw=1,
                ms=3, label="median ack latency")
    bottom.plot(seconds, [max(latencies[s]) if latencies[s] else nan for s in seconds], ".-", color="grey", lw=0.8,
                ms=3, label="max ack latency")
    bottom.set_yscale("log")
    bottom.set_ylabel("ms (log)")
    bottom.set_xlabel("seconds since the run started")
    handles = [Patch(color=COLOURS.get(n, "grey"), alpha=0.3, label=n) for n in sorted(used)]
    top.legend(handles=top.get_legend_handles_labels()[0] + handles, loc="upper right", fontsize=8)
    bottom.legend(loc="upper right", fontsize=8)
    status = "PASS" if verdict.ok else f"FAIL: {verdict.anomalies} anomalies ({', '.join(r.name for r in verdict.results if not r.ok)})"
    fig.suptitle(f"fauxka chaos, seed {verdict.seed}: {status}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _band(top, bottom, fault: dict, start: float, end: float) -> None:
    colour = COLOURS.get(fault["nemesis"], "grey")
    for ax in (top, bottom):
        ax.axvspan(start, end, color=colour, alpha=0.25, lw=0)
    top.annotate(f"{fault['step']}:{fault['nemesis'][:4]} {fault['broker']}", (start, 1.0), xycoords=("data", "axes fraction"),
                 fontsize=7, rotation=90, va="top")


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]
