"""Pane 6 — Decay: live charts of where memory strength and rule scores are heading.

Four plotext charts — projected strength of chosen memories, projected score of chosen rules, the
strength distribution by tier, and how many memories cross the archive threshold day by day —
over a forecast table of everything that crosses within the horizon. Editing a half-life draws a
what-if beside the real curve; `]` / `[` step a preview clock into the future. Nothing here writes:
every number comes from the engine's read-only forecast calls, and the charts redraw whenever the
database changes."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Input
from textual_plotext import PlotextPlot

from console.widgets import charts
from console.widgets.safe import SafeStatic as Static  # data, never raw controls or markup
from console.widgets.table import DataGrid
from engine.clock import DAY, iso
from engine.errors import NotFound
from engine.lifecycle.types import DecayCurve, Forecast, ForecastTimeline, StrengthDistribution
from engine.types import KINDS

from .base import Pane, PaneCommand

STEP_DAYS = 7
COLORS = ("cyan", "green", "orange", "blue", "magenta", "yellow")
AUTO_MEMORIES, AUTO_RULES = 3, 2


@dataclass
class DecayView:
    """Everything one redraw needs, gathered by one worker."""

    now: float
    offset_days: int
    horizon: int
    rates: dict | None  # what-if half-lives (days), None when unchanged
    forecast: Forecast  # with the what-if rates, if any
    timeline: ForecastTimeline  # at the configured rates
    what_if_timeline: ForecastTimeline | None
    distribution: StrengthDistribution
    memory_curves: list[tuple[DecayCurve, DecayCurve | None]] = field(default_factory=list)  # real, what-if
    rule_curves: list[DecayCurve] = field(default_factory=list)
    chosen: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def parse_chosen(text: str) -> tuple[list[str], list[str]]:
    """'m3 r5 12' -> (['m3', 'r5', 'm12'], bad tokens). A bare number is a memory."""
    keys, bad = [], []
    for tok in text.replace(",", " ").split():
        t = tok.lower()
        kind, num = (t[0], t[1:]) if t[0] in "mr" else ("m", t)
        if num.isdigit():
            key = f"{kind}{int(num)}"
            if key not in keys:
                keys.append(key)
        else:
            bad.append(tok)
    return keys, bad


class DecayPane(Pane):
    PANE_ID = "decay"
    TITLE = "Decay"
    FILTER_SELECTOR = "#decay-chosen"
    MAIN_SELECTOR = "#decay-forecast"

    BINDINGS = [
        *Pane.BINDINGS,
        Binding("right_square_bracket", "step(1)", f"Preview +{STEP_DAYS} d", id="decay.forward"),
        Binding("left_square_bracket", "step(-1)", f"Preview −{STEP_DAYS} d", id="decay.back"),
        Binding("n", "reset_clock", "Preview now", id="decay.now"),
        Binding("space", "toggle_chosen", "Chart it", id="decay.toggle"),
        Binding("w", "reset_rates", "Clear what-if", id="decay.clear_what_if"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.offset_days = 0
        self.chosen: list[str] | None = None  # None: chart the first crossers automatically
        self.view: DecayView | None = None
        self.debounce = 0.3  # seconds of quiet typing before a redraw
        self._debounce_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="decay-controls"):
            yield Static("", id="decay-clock")
            yield Static(" horizon", classes="hint")
            yield Input("30", id="decay-horizon", type="integer")
            yield Static("d · half-life in days:", classes="hint")
            for k in KINDS:
                yield Static(f" {k}", classes="hint")
                yield Input("", id=f"hl-{k}", classes="half-life", type="number")
        with Horizontal(id="decay-chart-bar"):
            yield Static(" chart:", classes="hint")
            yield Input("", placeholder="m12 r3 … (auto)", id="decay-chosen")
            yield Static("", id="decay-status", classes="hint")
        with Vertical(id="decay-charts"):
            with Horizontal(classes="decay-row"):
                yield PlotextPlot(id="chart-memories", classes="panel")
                yield PlotextPlot(id="chart-rules", classes="panel")
            with Horizontal(classes="decay-row"):
                yield PlotextPlot(id="chart-distribution", classes="panel")
                yield PlotextPlot(id="chart-forecast", classes="panel")
        yield DataGrid(id="decay-forecast")

    def on_mount(self) -> None:
        ds = self.engine.settings.decay
        for k in KINDS:
            self.query_one(f"#hl-{k}", Input).value = f"{ds.half_life_days.get(k, 30.0):g}"
        grid = self.table("#decay-forecast")
        grid.add_columns("chart", "id", "kind", "agent", "now", "then", "crosses", "in", "what")
        grid.border_title = "crosses within the horizon (space: chart it)"
        self._draw_clock(self.engine.clock.now())

    # -- inputs -------------------------------------------------------------------------------------------
    def params(self) -> dict:
        """The operator's settings, validated without a database call."""
        try:
            horizon = int(self.query_one("#decay-horizon", Input).value or 30)
        except ValueError:
            horizon = 30
        horizon = max(1, min(365, horizon))
        ds = self.engine.settings.decay
        rates = {}
        for k in KINDS:
            try:
                v = float(self.query_one(f"#hl-{k}", Input).value)
            except ValueError:
                continue
            if v > 0 and abs(v - float(ds.half_life_days.get(k, 30.0))) > 1e-9:
                rates[k] = v
        return {
            "offset": self.offset_days,
            "horizon": horizon,
            "rates": rates or None,
            "chosen": list(self.chosen) if self.chosen is not None else None,
        }

    @on(Input.Changed, "#decay-horizon, .half-life")
    def _inputs_changed(self) -> None:
        # Typing "120" would start three redraws (each several full scans on a big database):
        # wait until the operator pauses.
        if self._debounce_timer is not None:
            self._debounce_timer.stop()
        if self.debounce <= 0:
            self.redraw()
        else:
            self._debounce_timer = self.set_timer(self.debounce, self.redraw)

    @on(Input.Submitted, "#decay-chosen")
    def _chosen_submitted(self, event: Input.Submitted) -> None:
        keys, bad = parse_chosen(event.value)
        if bad:
            self.notify(f"Not a memory or rule id: {', '.join(bad)} (write m12 or r3).", severity="warning")
        self.chosen = keys or None
        self.redraw()

    def action_step(self, direction: int) -> None:
        self.offset_days = max(0, self.offset_days + direction * STEP_DAYS)
        self.redraw()

    def action_reset_clock(self) -> None:
        self.offset_days = 0
        self.redraw()

    def action_reset_rates(self) -> None:
        ds = self.engine.settings.decay
        with self.prevent(Input.Changed):
            for k in KINDS:
                self.query_one(f"#hl-{k}", Input).value = f"{ds.half_life_days.get(k, 30.0):g}"
        self.redraw()

    def action_toggle_chosen(self) -> None:
        key = self.table("#decay-forecast").selected_key
        if not key:
            return
        chosen = list(self.view.chosen) if self.chosen is None and self.view else list(self.chosen or [])
        if key in chosen:
            chosen.remove(key)
        else:
            chosen.append(key)
        self.chosen = chosen
        with self.prevent(Input.Changed):
            self.query_one("#decay-chosen", Input).value = " ".join(chosen)
        self.redraw()

    # -- loading ----------------------------------------------------------------------------------------
    def refresh_data(self) -> None:
        super().refresh_data()
        self.redraw()

    def redraw(self) -> None:
        self.load(self.params())

    @work(thread=True, exclusive=True, exit_on_error=False, group="decay.load")
    def load(self, p: dict) -> None:
        eng = self.engine
        now = eng.clock.now() + p["offset"] * DAY
        h, rates = p["horizon"], p["rates"]
        fc = eng.decay.forecast(h, now=now, rates=rates, limit=200)
        view = DecayView(
            now,
            p["offset"],
            h,
            rates,
            fc,
            eng.decay.timeline(h, now=now),
            eng.decay.timeline(h, now=now, rates=rates) if rates else None,
            eng.decay.distribution(now=now, bins=10),
        )
        chosen = p["chosen"]
        if chosen is None:  # nothing chosen yet: the next memories and rules to cross
            ahead = [m for m in fc.memories if m.crosses_at > now] or fc.memories  # skip overdue
            chosen = [f"m{m.id}" for m in ahead[:AUTO_MEMORIES]]
            rules = [f"r{r.id}" for r in fc.rules[:AUTO_RULES]] or [
                f"r{r.id}" for r in eng.rules.list(status=["active", "dormant"], limit=AUTO_RULES)
            ]
            chosen += rules
        view.chosen = chosen
        for key in chosen:
            tid = int(key[1:])
            try:
                if key[0] == "m":
                    real = eng.decay.curve(tid, days=h, now=now)
                    what_if = (
                        eng.decay.curve(tid, days=h, now=now, rates=rates)
                        if rates and real.label in rates
                        else None
                    )
                    view.memory_curves.append((real, what_if))
                else:
                    view.rule_curves.append(eng.rules.curve(tid, days=h, now=now))
            except NotFound:
                view.missing.append(key)
        self.deliver(self._show, view)

    # -- drawing ----------------------------------------------------------------------------------------
    def _draw_clock(self, now: float) -> None:
        t = Text()
        t.append(" preview ", style="bold")
        t.append((iso(now) or "")[:10], style="bold reverse" if self.offset_days else "bold")
        t.append(f" +{self.offset_days} d" if self.offset_days else " (now)")
        self.query_one("#decay-clock", Static).update(t)

    def _show(self, v: DecayView) -> None:
        self.view = v
        self._draw_clock(v.now)
        self._draw_memories(v)
        self._draw_rules(v)
        self._draw_distribution(v)
        self._draw_forecast(v)
        self._fill_table(v)
        fc = v.forecast
        status = [
            f"{fc.memories_total} memories archive and {len(fc.rules)} rules change status "
            f"within {v.horizon} d"
        ]
        if v.rates:
            ds = self.engine.settings.decay
            status.append(
                "what-if "
                + ", ".join(f"{k} {ds.half_life_days.get(k):g}→{x:g} d" for k, x in v.rates.items())
                + " (nothing is written)"
            )
        if v.missing:
            status.append(f"not found: {' '.join(v.missing)}")
        self.query_one("#decay-status", Static).update(" · ".join(status))

    def _draw_memories(self, v: DecayView) -> None:
        plot = self.query_one("#chart-memories", PlotextPlot)
        thr = self.engine.settings.decay.archive_threshold
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

    def _draw_rules(self, v: DecayView) -> None:
        plot = self.query_one("#chart-rules", PlotextPlot)
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

    def _draw_distribution(self, v: DecayView) -> None:
        plot = self.query_one("#chart-distribution", PlotextPlot)
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

    def _draw_forecast(self, v: DecayView) -> None:
        plot = self.query_one("#chart-forecast", PlotextPlot)
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

    def _fill_table(self, v: DecayView) -> None:
        rows = []
        chosen = set(v.chosen)
        for m in v.forecast.memories:
            key = f"m{m.id}"
            rows.append(
                (
                    key,
                    [
                        "●" if key in chosen else "",
                        key,
                        m.kind,
                        m.agent or "–",
                        f"{m.strength_now:.2f}",
                        f"{m.strength_then:.2f}",
                        (iso(m.crosses_at) or "")[:10],
                        f"{(m.crosses_at - v.now) / DAY:.1f} d"
                        if m.crosses_at > v.now
                        else Text("overdue", style="yellow"),
                        Text(m.preview[:60], style="dim"),
                    ],
                )
            )
        for r in v.forecast.rules:
            key = f"r{r.id}"
            rows.append(
                (
                    key,
                    [
                        "●" if key in chosen else "",
                        key,
                        "rule",
                        r.agent or "(all)",
                        charts.score_text(r.score_now),
                        charts.score_text(r.score_then),
                        "",
                        "",
                        Text(
                            f"{r.status_now} → {r.status_then} · {r.text[:44]}",
                            style=charts.STATUS_STYLES.get(r.status_then, ""),
                        ),
                    ],
                )
            )
        self.table("#decay-forecast").set_rows(rows)

    def commands(self) -> list[PaneCommand]:
        return [
            PaneCommand(
                f"Step the preview clock +{STEP_DAYS} days",
                "Show the future (writes nothing)",
                lambda: self.action_step(1),
            ),
            PaneCommand("Preview clock back to now", "", self.action_reset_clock),
            PaneCommand(
                "Clear the what-if half-lives", "Back to the configured rates", self.action_reset_rates
            ),
            PaneCommand(
                "Chart the selected forecast row", "Add or remove its curve", self.action_toggle_chosen
            ),
        ]
