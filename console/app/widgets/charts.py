"""Chart helpers over textual-plotext and rule score bands, shared by the Rules, Flows and Decay
panes: colours by band, a step series from a history, a pass/fail strip for table cells, and the
chart box: its title names the chart and the series it shows, its subtitle is the legend (outside
the plotted area), threshold lines carry their label, every series has its own colour (RGB, so
no theme maps two of them to one hue)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual_plotext import PlotextPlot

# The bands operators know (engine/decay.py BANDS): 9–10 critical, 7–8 and 5–6 active,
# 3–4 dormant, 1–2 (and below) retired. Named colours read on dark and light themes.
BAND_STYLES = ((9.0, "bold red"), (7.0, "green"), (5.0, "cyan"), (3.0, "yellow"), (0.0, "bright_black"))
STATUS_STYLES = {"critical": "bold red", "active": "green", "dormant": "yellow", "retired": "bright_black"}
RGB = tuple[int, int, int]
RED: RGB = (230, 70, 70)
GREEN: RGB = (90, 200, 90)
YELLOW: RGB = (220, 190, 60)
# The edges drawn on score charts, each labelled with the band it starts.
BAND_LINES: tuple[tuple[float, RGB, str], ...] = (
    (9.0, RED, "critical 9"),
    (5.0, GREEN, "active 5"),
    (3.0, YELLOW, "dormant 3"),
)
# Series colours, all distinct from each other and from the threshold lines above.
SERIES: tuple[RGB, ...] = (
    (0, 200, 230),  # cyan
    (255, 150, 30),  # orange
    (200, 110, 255),  # violet
    (60, 130, 255),  # blue
    (255, 110, 190),  # pink
    (170, 230, 60),  # lime
)
LINE_MARKER = "hd"  # braille dots spill a cell or more past the right axis; half blocks stay inside
TIERS: dict[str, RGB] = {"core": (60, 130, 255), "active": GREEN, "archived": (150, 150, 150)}


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


def series_color(i: int) -> RGB:
    return SERIES[i % len(SERIES)]


def hex_color(rgb: RGB) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def box(plot: Widget, name: str, series: Sequence[tuple[str, RGB]]) -> None:
    """The chart box names the chart and its series (title) and shows the legend (subtitle),
    both outside the plotted area. Plain Text: labels are never parsed as markup."""
    names = ", ".join(label for label, _ in series)
    plot.border_title = Text(f"{name}: {names}" if names else name)
    legend = Text()
    for label, rgb in series:
        legend.append(" ■ ", style=hex_color(rgb))
        legend.append(label + " ")
    plot.border_subtitle = legend if series else None


def threshold(plt: Any, y: float, rgb: RGB, label: str, x: float) -> None:
    """A horizontal threshold line with its label written on it at `x` (inside the axes)."""
    plt.hline(y, rgb)
    plt.text(label, x, y, color=rgb, alignment="left")
