"""The Decay pane's four charts, drawn from one DecayView: projected memory strength (with
what-ifs), projected rule scores, the strength distribution by tier and the archive forecast."""

from __future__ import annotations

from textual_plotext import PlotextPlot

from console.widgets import charts

from .decay_view import DecayView

COLORS = ("cyan", "green", "orange", "blue", "magenta", "yellow")


def draw_memories(plot: PlotextPlot, v: DecayView, thr: float) -> None:
    """Projected strength of the chosen memories, a what-if dotted beside each; the threshold red."""
    if not v.memory_curves:
        charts.message(plot, "memory strength", "no memory chosen (type m<id> in chart:)")
        return
    plt = charts.reset(plot, f"memory strength (archived below {thr:g})", "days ahead")
    for i, (real, what_if) in enumerate(v.memory_curves):
        color = COLORS[i % len(COLORS)]
        tag = f"m{real.target_id} {real.label}{' (holds)' if real.frozen else ''}"
        plt.plot(
            [p.day for p in real.points],
            [p.value for p in real.points],
            color=color,
            marker="braille",
            label=tag,
        )
        if what_if is not None:
            plt.plot(
                [p.day for p in what_if.points],
                [p.value for p in what_if.points],
                color=color,
                marker="·",
                label=f"m{real.target_id} what-if",
            )
    plt.hline(thr, "red")
    plt.ylim(0, 1.05)
    plot.refresh()


def draw_rules(plot: PlotextPlot, v: DecayView) -> None:
    """Projected score of the chosen rules, with the band edges."""
    if not v.rule_curves:
        charts.message(plot, "rule score", "no rule chosen (type r<id> in chart:)")
        return
    plt = charts.reset(plot, "rule score if not reinforced (retired below 3)", "days ahead")
    for i, c in enumerate(v.rule_curves):
        plt.plot(
            [p.day for p in c.points],
            [p.value for p in c.points],
            color=COLORS[(i + 3) % len(COLORS)],
            marker="braille",
            label=f"r{c.target_id} {c.label}{' (holds)' if c.frozen else ''}",
        )
    for edge, color in charts.BAND_LINES:
        plt.hline(edge, color)
    plt.ylim(0, 10.5)
    plot.refresh()


def draw_distribution(plot: PlotextPlot, v: DecayView) -> None:
    """How many memories of each tier sit in each strength bin."""
    d = v.distribution
    tiers = [t for t in ("core", "active", "archived") if sum(d.counts.get(t, []))]
    if not tiers:
        charts.message(plot, "strength by tier", "no memories")
        return
    plt = charts.reset(
        plot,
        f"strength by tier · {d.below_threshold.get('active', 0)} active under the threshold",
        "strength",
    )
    labels = [f"{e:.1f}" for e in d.edges[:-1]]
    plt.multiple_bar(
        labels,
        [d.counts[t] for t in tiers],
        labels=tiers,
        color=[{"core": "blue", "active": "green", "archived": "bright_black"}[t] for t in tiers],
    )
    plot.refresh()


def draw_forecast(plot: PlotextPlot, v: DecayView) -> None:
    """Memories archived day by day, cumulative (configured rates, and the what-if)."""
    tl = v.timeline
    plt = charts.reset(
        plot,
        f"archived by day · {tl.total} in {v.horizon} d"
        + (f" (what-if {v.what_if_timeline.total})" if v.what_if_timeline else ""),
        "days ahead",
    )
    xs = list(range(1, tl.days + 1))
    plt.plot(xs, tl.cumulative, color="cyan", marker="braille", label="configured rates")
    if v.what_if_timeline is not None:
        plt.plot(xs, v.what_if_timeline.cumulative, color="magenta", marker="braille", label="what-if")
    top = max([1, *tl.cumulative, *(v.what_if_timeline.cumulative if v.what_if_timeline else [])])
    plt.ylim(0, top * 1.1)
    plot.refresh()
