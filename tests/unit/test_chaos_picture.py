"""The chaos timeline picture: fault labels never overlap one another, and no legend covers a panel."""

import types

import pytest

pytest.importorskip("matplotlib")

from fauxka.chaos.picture import assign_lanes, figure  # noqa: E402


def _events() -> list[dict]:
    """Faults close together (the run that showed overlapping labels had six within 10 s), some acks."""
    events = [{"type": "send", "t": 100.0 + i * 0.1, "value": i} for i in range(400)]
    events += [{"type": "ack", "t": 100.05 + i * 0.1, "value": i} for i in range(400)]
    faults = [(0, 101.0, 104.0, "kill", 1, None), (1, 101.5, 101.6, "leader", 2, None), (2, 102.0, 109.0, "link", 2, 3),
              (3, 102.2, 102.3, "coordinator", 3, None), (4, 103.0, 120.0, "storage", 3, None),
              (5, 103.1, 103.2, "restart", 2, None), (6, 130.0, 135.0, "pause", 1, None)]
    for step, start, end, nemesis, broker, peer in faults:
        fields = {"type": "fault", "step": step, "nemesis": nemesis, "broker": broker, "peer": peer}
        events += [{**fields, "t": start, "phase": "start"}, {**fields, "t": end, "phase": "end"}]
    return sorted(events, key=lambda e: e["t"])


def test_labels_are_apart_and_legends_outside_the_panels():
    verdict = types.SimpleNamespace(ok=True, seed=7, anomalies=0, results=[])
    fig = figure(_events(), verdict)
    renderer = fig.canvas.get_renderer()
    lane_ax = fig.axes[0]
    labels = [t.get_window_extent(renderer) for t in lane_ax.texts]
    assert len(labels) == 7
    overlapping = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:] if a.overlaps(b)]
    assert overlapping == []
    panels = [ax.get_window_extent(renderer) for ax in fig.axes[:3]]
    legends = [ax.get_legend().get_window_extent(renderer) for ax in fig.axes[:3] if ax.get_legend()]
    assert len(legends) == 3  # one names every fault kind, none hidden
    assert not [1 for legend in legends for panel in panels if legend.overlaps(panel)]
    kinds = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert kinds == sorted(["kill", "leader", "link", "coordinator", "storage", "restart", "pause"])


def test_lanes_keep_a_label_clear_of_the_next_fault():
    faults = [{"start": 0.0, "end": 0.3, "label": "#0 leader 2"}, {"start": 0.5, "end": 5.0, "label": "#1 kill 1"},
              {"start": 10.0, "end": 11.0, "label": "#2 pause 3"}]
    assert assign_lanes(faults, seconds_per_char=0.1) == [0, 1, 0]  # #0's label reaches 1.2 s
