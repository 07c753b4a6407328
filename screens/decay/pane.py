"""Pane 6 — Decay: live charts of where memory strength and rule scores are heading.

Four plotext charts — projected strength of chosen memories, projected score of chosen rules, the
strength distribution by tier, and how many memories cross the archive threshold day by day —
over a forecast table of everything that crosses within the horizon. Editing a half-life draws a
what-if beside the real curve; `]` / `[` step a preview clock into the future. Only `D` writes: it
shows the engine's dry run of a decay pass at the real clock (what would be archived, which rules
change band), asks, then runs the pass (audited by the engine). Every other number comes from the
engine's read-only forecast calls, and the charts redraw whenever the database changes. The
writes (marked rows, the decay pass) are in actions.py."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Input
from textual_plotext import PlotextPlot

from console.app.widgets.safe import SafeStatic as Static  # data, never raw controls or markup
from console.app.widgets.table import DataGrid
from engine.clock import DAY, iso
from engine.errors import NotFound
from engine.types import KINDS
from screens.base import Pane, PaneCommand
from screens.lifecycle_marks import Marks

from .actions import DecayActions
from .charts import draw_distribution, draw_forecast, draw_memories, draw_rules
from .view import DecayView, forecast_rows, parse_chosen

STEP_DAYS = 7
AUTO_MEMORIES, AUTO_RULES = 3, 2


class DecayPane(DecayActions):
    PANE_ID = "decay"
    TITLE = "Decay"
    FILTER_SELECTOR = "#decay-chosen"
    MAIN_SELECTOR = "#decay-forecast"
    ROW_ACTIONS = frozenset({"mark", "archive_marked", "pin_marked", "toggle_chosen"})
    TABLE_TITLE = "crosses within the horizon (space marks · a archive now · p pin · c chart it)"

    BINDINGS = [
        *Pane.BINDINGS,
        Binding("right_square_bracket", "step(1)", f"Preview +{STEP_DAYS} d", id="decay.forward"),
        Binding("left_square_bracket", "step(-1)", f"Preview −{STEP_DAYS} d", id="decay.back"),
        Binding("n", "reset_clock", "Preview now", id="decay.now"),
        Binding("space", "mark", "Mark", id="decay.mark"),
        Binding("a", "archive_marked", "Archive now…", id="decay.archive"),
        Binding("p", "pin_marked", "Pin…", id="decay.pin"),
        Binding("c", "toggle_chosen", "Chart it", id="decay.toggle"),
        Binding("w", "reset_rates", "Clear what-if", id="decay.clear_what_if"),
        Binding("D", "run_decay", "Run decay now", id="decay.run"),
        Binding("t", "next_chart", "Next chart", id="decay.next_chart"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.offset_days = 0
        self.chosen: list[str] | None = None  # None: chart the first crossers automatically
        self.view: DecayView | None = None
        self.debounce = 0.3  # seconds of quiet typing before a redraw
        self._debounce_timer: Timer | None = None
        self.marks = Marks()
        self.chart_index = 0  # the chart a short terminal shows (t cycles)

    def compose(self) -> ComposeResult:
        with Horizontal(id="decay-top"):  # one line when wide; the half-lives wrap below when narrow
            with Horizontal(id="decay-controls"):
                yield Static("", id="decay-clock")
                yield Static(" horizon", classes="hint")
                yield Input("30", id="decay-horizon", type="integer")
                yield Static("d ·", classes="hint")
            with Horizontal(id="decay-rates"):
                yield Static(" half-life in days:", classes="hint")
                for k in KINDS:
                    yield Static(f" {k}", classes="hint")
                    yield Input("", id=f"hl-{k}", classes="half-life", type="number")
        with Horizontal(id="decay-chart-bar"):
            yield Static(" chart:", classes="hint")
            yield Input("", placeholder="m12 r3 (auto)", id="decay-chosen")
            yield Static("", id="decay-chart-key", classes="hint")
            yield Static("", id="decay-status", classes="hint")
        with Vertical(id="decay-charts"):
            with Horizontal(classes="decay-row"):
                yield PlotextPlot(id="chart-memories", classes="panel")
                yield PlotextPlot(id="chart-rules", classes="panel")
            with Horizontal(classes="decay-row"):
                yield PlotextPlot(id="chart-distribution", classes="panel")
                yield PlotextPlot(id="chart-forecast", classes="panel")
        yield DataGrid(id="decay-forecast", flex_column="what")

    # -- the layout: a short terminal shows one chart at a time (t cycles), the crossings keep rows --
    COMPACT_BELOW = 30  # rows of the pane (80×24 gives ~19): fewer, and one chart is drawn
    NARROW_BELOW = 125  # columns: fewer, and the half-lives take a second line
    CHARTS = ("chart-memories", "chart-rules", "chart-distribution", "chart-forecast")

    def on_resize(self) -> None:
        self.set_class(self.size.height < self.COMPACT_BELOW, "-compact")
        self.set_class(self.size.width < self.NARROW_BELOW, "-narrow")
        self._show_charts()

    def _show_charts(self) -> None:
        """All four charts, or in a short terminal only the one `t` picked (its row takes the space)."""
        compact = self.has_class("-compact")
        for i, cid in enumerate(self.CHARTS):
            self.query_one(f"#{cid}").display = not compact or i == self.chart_index
        for n, row in enumerate(self.query(".decay-row")):
            row.display = not compact or self.chart_index // 2 == n
        key = self.query_one("#decay-chart-key", Static)
        key.display = compact
        key.update(f" t: next chart ({self.chart_index + 1}/4) ·" if compact else "")

    def action_next_chart(self) -> None:
        if not self.has_class("-compact"):
            self.say("All four charts are shown; t picks one when the terminal is short.")
            return
        self.chart_index = (self.chart_index + 1) % len(self.CHARTS)
        self._show_charts()

    def on_mount(self) -> None:
        ds = self.engine.settings.decay
        for k in KINDS:
            self.query_one(f"#hl-{k}", Input).value = f"{ds.half_life_days.get(k, 30.0):g}"
        grid = self.table("#decay-forecast")
        self._id_column = grid.add_columns(
            "chart", "id", "kind", "agent", "now", "then", "crosses", "in", "what"
        )[1]
        grid.border_title = self.TABLE_TITLE
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
        draw_memories(
            self.query_one("#chart-memories", PlotextPlot), v, self.engine.settings.decay.archive_threshold
        )
        draw_rules(self.query_one("#chart-rules", PlotextPlot), v)
        draw_distribution(self.query_one("#chart-distribution", PlotextPlot), v)
        draw_forecast(self.query_one("#chart-forecast", PlotextPlot), v)
        rows = forecast_rows(v)
        self.marks.keep_only(k for k, _ in rows)
        grid = self.table("#decay-forecast")
        grid.set_rows([(k, [c[0], self.marks.cell(k, c[1]), *c[2:]]) for k, c in rows])
        grid.border_title = self.marks.title(self.TABLE_TITLE)
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
            PaneCommand("Mark / unmark the selected row", "space", self.action_mark),
            PaneCommand("Archive the marked memories now", "Confirmed, audited", self.action_archive_marked),
            PaneCommand("Pin the marked rows", "Confirmed, audited", self.action_pin_marked),
            PaneCommand(
                "Run a decay pass now", "Preview what it changes, then confirm", self.action_run_decay
            ),
            PaneCommand(
                "Chart the selected forecast row", "Add or remove its curve", self.action_toggle_chosen
            ),
            PaneCommand(
                "Next chart (short terminal)", "t: one chart at a time below 30 rows", self.action_next_chart
            ),
        ]
