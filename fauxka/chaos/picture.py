"""The run as one picture (matplotlib): the faults on a panel of their own (one bar each, labelled
with its step number, kind and broker, in as many lanes as keep the labels apart), coloured bands
across the two panels below for when each lasted, acknowledged records per second, acknowledgement
latency (median and max per second), failed deliveries as red ticks, the verdict in the title.
Legends sit outside the panels, where they hide nothing."""

from collections import defaultdict
from pathlib import Path

COLOURS = {"kill": "#d62728", "pause": "#ff7f0e", "restart": "#8c564b", "link": "#9467bd", "zookeeper": "#17becf",
           "replication": "#bcbd22", "storage": "#7f7f7f", "leader": "#2ca02c", "coordinator": "#1f77b4"}
WIDTH_IN, DPI, FONT_PT = 14, 100, 7
PLOT_FRACTION = 0.78  # of the figure's width: the panels; the rest holds the legends


def draw(events: list[dict], verdict, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig = figure(events, verdict)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def figure(events: list[dict], verdict):
    """The picture as a matplotlib Figure (the caller saves and closes it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    t0 = min(e["t"] for e in events)
    end = max(e["t"] for e in events) - t0
    faults = fault_intervals(events, t0, end)
    lanes = assign_lanes(faults, seconds_per_char=_seconds_per_char(end))
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
    lane_count = max(lanes, default=-1) + 1
    fig, (lane_ax, top, bottom) = plt.subplots(
        3, 1, dpi=DPI, figsize=(WIDTH_IN, 6 + 0.25 * max(lane_count, 1)), sharex=True,
        gridspec_kw={"height_ratios": [0.3 + 0.22 * max(lane_count, 1), 2, 2]})
    for fault, lane in zip(faults, lanes):
        colour = COLOURS.get(fault["nemesis"], "grey")
        lane_ax.broken_barh([(fault["start"], fault["end"] - fault["start"])], (lane + 0.1, 0.8), color=colour, alpha=0.6)
        lane_ax.text(fault["start"], lane + 0.5, " " + fault["label"], va="center", ha="left", fontsize=FONT_PT,
                     clip_on=True)
        for ax in (top, bottom):
            ax.axvspan(fault["start"], fault["end"], color=colour, alpha=0.2, lw=0)
    lane_ax.set_ylim(max(lane_count, 1), 0)
    lane_ax.set_yticks([])
    lane_ax.set_ylabel("faults", rotation=0, ha="right", va="center")
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
    bottom.set_xlim(0, max(end, 1))
    kinds = sorted({f["nemesis"] for f in faults})
    if kinds:
        lane_ax.legend(handles=[Patch(color=COLOURS.get(n, "grey"), alpha=0.6, label=n) for n in kinds],
                       loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="fault", title_fontsize=8)
    top.legend(loc="upper left", bbox_to_anchor=(1.01 if not commits else 1.08, 1.0), fontsize=8)
    bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    status = "PASS" if verdict.ok else f"FAIL: {verdict.anomalies} anomalies ({', '.join(r.name for r in verdict.results if not r.ok)})"
    fig.suptitle(f"fauxka chaos, seed {verdict.seed}: {status}")
    fig.subplots_adjust(left=0.06, right=PLOT_FRACTION, top=0.93, bottom=0.08, hspace=0.08)
    return fig


def fault_intervals(events: list[dict], t0: float, end: float) -> list[dict]:
    """Each fault's start and end (s since t0; never healed: to the end; instant ones 0.3 s wide) and label."""
    starts, out = {}, []
    for e in events:
        if e["type"] != "fault":
            continue
        if e["phase"] == "start":
            starts[e["step"]] = e
        elif e["phase"] == "end" and e["step"] in starts:
            s = starts.pop(e["step"])
            out.append(_interval(s, s["t"] - t0, max(e["t"] - t0, s["t"] - t0 + 0.3)))
    out += [_interval(s, s["t"] - t0, max(end, s["t"] - t0 + 0.3)) for s in starts.values()]
    return sorted(out, key=lambda f: f["start"])


def _interval(fault: dict, start: float, end: float) -> dict:
    label = f"#{fault['step']} {fault['nemesis']} {fault['broker']}"
    if fault.get("peer") is not None:
        label += f"<->{fault['peer']}"
    return {"start": start, "end": end, "nemesis": fault["nemesis"], "label": label}


def assign_lanes(faults: list[dict], seconds_per_char: float) -> list[int]:
    """The lowest lane where neither the fault's bar nor its label (drawn from its start, about
    seconds_per_char wide a character) meets one already placed; faults in start order."""
    lanes: list[float] = []  # where each lane is free from
    out = []
    for fault in faults:
        reach = max(fault["end"], fault["start"] + (len(fault["label"]) + 2) * seconds_per_char)
        lane = next((i for i, free in enumerate(lanes) if free <= fault["start"]), len(lanes))
        if lane == len(lanes):
            lanes.append(reach)
        else:
            lanes[lane] = reach
        out.append(lane)
    return out


def _seconds_per_char(end: float) -> float:
    """How many seconds of the x axis one label character covers (7 pt text is about 4.2 px a character)."""
    plot_px = WIDTH_IN * DPI * (PLOT_FRACTION - 0.06)
    return max(end, 1) / plot_px * FONT_PT * 0.6 * DPI / 72


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]
