"""The Decay pane's four charts, drawn from one DecayView: projected memory strength (with
what-ifs), projected rule scores, the strength distribution by tier and the archive forecast.
Each chart box's title names the chart and its series, its subtitle is the legend (outside the
plot), threshold lines are labelled, every series has its own colour and the axes are fixed to
the horizon so nothing is drawn past them."""

from __future__ import annotations

from textual_plotext import PlotextPlot

from console.app.widgets import charts

from .view import DecayView


def draw_memories(plot: PlotextPlot, v: DecayView, thr: float) -> None:
    """Projected strength of the chosen memories, a what-if dotted beside each; the threshold red."""
    if not v.memory_curves:
        charts.box(plot, "memory strength", [])
        charts.message(plot, "", "no memory chosen (type m<id> in chart:)")
        return
    plt = charts.reset(plot, "", "days ahead")
    series = []
    for i, (real, what_if) in enumerate(v.memory_curves):
        color = charts.series_color(i)
        tag = f"m{real.target_id} {real.label}{' (holds)' if real.frozen else ''}"
        plt.plot(
            [p.day for p in real.points],
            [p.value for p in real.points],
            color=color,
            marker=charts.LINE_MARKER,
        )
        series.append((tag, color))
        if what_if is not None:
            plt.plot(
                [p.day for p in what_if.points], [p.value for p in what_if.points], color=color, marker="·"
            )
            series.append((f"m{real.target_id} what-if (·)", color))
    charts.threshold(plt, thr, charts.RED, f"archive {thr:g}", v.horizon * 0.7)
    plt.xlim(0, v.horizon)
    plt.ylim(0, 1.05)
    charts.box(plot, "memory strength", series)
    plot.refresh()


def draw_rules(plot: PlotextPlot, v: DecayView) -> None:
    """Projected score of the chosen rules, with the band edges."""
    if not v.rule_curves:
        charts.box(plot, "rule score if not reinforced", [])
        charts.message(plot, "", "no rule chosen (type r<id> in chart:)")
        return
    plt = charts.reset(plot, "", "days ahead")
    series = []
    for i, c in enumerate(v.rule_curves):
        color = charts.series_color(i + len(v.memory_curves))  # not the memory chart's colours
        plt.plot(
            [p.day for p in c.points], [p.value for p in c.points], color=color, marker=charts.LINE_MARKER
        )
        series.append((f"r{c.target_id} {c.label}{' (holds)' if c.frozen else ''}", color))
    for edge, color, label in charts.BAND_LINES:
        charts.threshold(plt, edge, color, label, v.horizon * 0.7)
    plt.xlim(0, v.horizon)
    plt.ylim(0, 10.5)
    charts.box(plot, "rule score if not reinforced", series)
    plot.refresh()


def draw_distribution(plot: PlotextPlot, v: DecayView) -> None:
    """How many memories of each tier sit in each strength bin."""
    d = v.distribution
    tiers = [t for t in ("core", "active", "archived") if sum(d.counts.get(t, []))]
    name = f"strength by tier · {d.below_threshold.get('active', 0)} active under the threshold"
    if not tiers:
        charts.box(plot, name, [])
        charts.message(plot, "", "no memories")
        return
    plt = charts.reset(plot, "", "strength")
    labels = [f"{e:.1f}" for e in d.edges[:-1]]
    plt.multiple_bar(labels, [d.counts[t] for t in tiers], color=[charts.TIERS[t] for t in tiers])
    charts.box(plot, name, [(t, charts.TIERS[t]) for t in tiers])
    plot.refresh()


def draw_forecast(plot: PlotextPlot, v: DecayView) -> None:
    """Memories archived day by day, cumulative (configured rates, and the what-if)."""
    tl = v.timeline
    name = f"archived by day · {tl.total} in {v.horizon} d" + (
        f" (what-if {v.what_if_timeline.total})" if v.what_if_timeline else ""
    )
    plt = charts.reset(plot, "", "days ahead")
    xs = list(range(1, tl.days + 1))
    series = [("configured rates", charts.SERIES[0])]
    plt.plot(xs, tl.cumulative, color=charts.SERIES[0], marker=charts.LINE_MARKER)
    if v.what_if_timeline is not None:
        plt.plot(xs, v.what_if_timeline.cumulative, color=charts.SERIES[1], marker=charts.LINE_MARKER)
        series.append(("what-if", charts.SERIES[1]))
    top = max([1, *tl.cumulative, *(v.what_if_timeline.cumulative if v.what_if_timeline else [])])
    plt.xlim(1, max(2, tl.days))
    plt.ylim(0, top * 1.1)
    charts.box(plot, name, series)
    plot.refresh()
