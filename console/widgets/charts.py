"""Chart helpers over textual-plotext and rule score bands, shared by the Rules, Flows and Decay
panes: colours by band, a step series from a history, a pass/fail strip for table cells."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual_plotext import PlotextPlot

# The bands operators know (engine/decay.py BANDS): 9–10 critical, 7–8 and 5–6 active,
# 3–4 dormant, 1–2 (and below) retired. Named colours read on dark and light themes.
BAND_STYLES = ((9.0, "bold red"), (7.0, "green"), (5.0, "cyan"), (3.0, "yellow"), (0.0, "bright_black"))
STATUS_STYLES = {"critical": "bold red", "active": "green", "dormant": "yellow", "retired": "bright_black"}
BAND_LINES = ((9.0, "red"), (5.0, "green"), (3.0, "yellow"))  # the edges drawn on score charts


def band_style(score: float) -> str:
    for edge, style in BAND_STYLES:
        if score >= edge:
            return style
    return BAND_STYLES[-1][1]


def score_text(score: float) -> Text:
    return Text(f"{score:4.1f}", style=band_style(score))


def status_text(status: str) -> Text:
    return Text(status, style=STATUS_STYLES.get(status, ""))


def outcome_text(outcomes: Iterable[bool]) -> Text:
    """Pass/fail runs as a strip: a tall green bar per pass, a low red one per fail."""
    t = Text()
    for ok in outcomes:
        t.append("█" if ok else "▁", style="green" if ok else "red")
    return t


def step_series(points: Sequence[tuple[float, float | None, float]]) -> tuple[list[float], list[float]]:
    """(x, old, new) changes -> x/y of a step line: the value holds until the next change."""
    xs: list[float] = []
    ys: list[float] = []
    for x, old, new in points:
        if xs:
            xs.append(x)
            ys.append(ys[-1])
        elif old is not None:
            xs.append(x)
            ys.append(old)
        xs.append(x)
        ys.append(new)
    return xs, ys


def reset(plot: PlotextPlot, title: str = "", xlabel: str = "", ylabel: str = ""):
    """Clear a plot for redrawing; returns its plotext handle."""
    plt = plot.plt
    plt.clear_figure()
    if title:
        plt.title(title)
    if xlabel:
        plt.xlabel(xlabel)
    if ylabel:
        plt.ylabel(ylabel)
    return plt


def message(plot: PlotextPlot, title: str, text: str) -> None:
    """An empty chart that says why it is empty."""
    plt = reset(plot, title)
    plt.xlim(0, 1)
    plt.ylim(0, 1)
    plt.xticks([])
    plt.yticks([])
    plt.text(text, 0.5, 0.5, alignment="center")
    plot.refresh()


def clip_left(xs: list[float], ys: list[float], x0: float) -> tuple[list[float], list[float]]:
    """Drop the part of a series left of x0, keeping the value it held at x0."""
    if not xs or xs[0] >= x0:
        return xs, ys
    keep = [i for i, x in enumerate(xs) if x >= x0]
    held = ys[keep[0] - 1] if keep else ys[-1]
    return [x0, *(xs[i] for i in keep)], [held, *(ys[i] for i in keep)]
