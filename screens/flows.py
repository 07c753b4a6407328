"""Pane 4 — Flows: every flow with uses, passes, fails, effectiveness and its trend, flagged flows
highlighted; the selected flow's steps, triggers and runs, and its effectiveness after each run
drawn as a sparkline and plotted over time. Disabling or enabling a flow is confirmed."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Input, Select, Sparkline
from textual_plotext import PlotextPlot

from console.app.widgets import charts
from console.app.widgets.safe import SafeStatic as Static  # data, never raw controls or markup
from console.app.widgets.table import DataGrid
from console.shared.text_safety import visible
from engine.clock import DAY, iso
from engine.lifecycle.types import Flow, FlowDetail, FlowStats, FlowStatus

from .base import Pane, PaneCommand

COLUMNS = (
    "flow",
    "uses",
    "pass",
    "fail",
    "eff %",
    "trend",
    "recent runs",
    "last run",
    "status",
    "domain",
    "agent",
)
SHOW = [("flagged only", "flagged"), ("active", "active"), ("disabled", "disabled")]
TREND = {"up": ("▲", "green"), "down": ("▼", "red"), "flat": ("▶", ""), "new": ("·", "bright_black")}


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v * 100:.0f}"


def trend_text(stats: FlowStats) -> Text:
    arrow, style = TREND.get(stats.trend, ("?", ""))
    if stats.trend == "new":
        return Text(f"{arrow} new", style=style)
    return Text(f"{arrow} {stats.trend_delta * 100:+.0f}", style=style)


class FlowsPane(Pane):
    PANE_ID = "flows"
    TITLE = "Flows"
    FILTER_SELECTOR = "#flows-filter"
    MAIN_SELECTOR = "#flows-table"

    BINDINGS = [
        *Pane.BINDINGS,
        Binding("t", "toggle_status", "Enable/disable…", id="flows.toggle_status"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.flows: dict[str, Flow] = {}
        self.all_flows: list[Flow] = []
        self.detail: FlowDetail | None = None
        self.now = 0.0

    def compose(self) -> ComposeResult:
        with Horizontal(id="flows-filters"):
            yield Input(placeholder="filter flows by name, domain, agent or trigger…", id="flows-filter")
            yield Select(SHOW, prompt="all flows", id="ff-show")
        yield Static("loading flows…", id="flows-status", classes="hint")
        with Horizontal(id="flows-main"):
            yield DataGrid(id="flows-table", flex_column="flow", flex_min=22)
            with Vertical(id="flow-detail", classes="panel"):
                yield Static("", id="flow-head")
                yield Sparkline([], id="flow-spark")
                yield PlotextPlot(id="flow-chart")
                with VerticalScroll(id="flow-body"):
                    yield Static("", id="flow-steps")

    def on_mount(self) -> None:
        self.table("#flows-table").add_columns(*COLUMNS)
        self.table("#flows-table").border_title = "flows (⚑ flagged: low effectiveness)"
        self.query_one("#flow-detail").border_title = "flow"

    # -- loading ------------------------------------------------------------------------------------
    def refresh_data(self) -> None:
        super().refresh_data()
        self.load(self._show_value())

    def _show_value(self) -> str | None:
        w = self.query_one("#ff-show", Select)
        return None if w.is_blank() else str(w.value)

    @on(Select.Changed, "#ff-show")
    def _show_changed(self) -> None:
        self.load(self._show_value())

    @on(Input.Changed, "#flows-filter")
    def _text_changed(self) -> None:
        self._fill()

    @work(thread=True, exclusive=True, exit_on_error=False, group="flows.list")
    def load(self, show: str | None) -> None:
        kw = {"flagged": True} if show == "flagged" else {"status": show} if show else {}
        flows = self.engine.flows.list(**kw)
        self.deliver(self._show, flows, self.engine.clock.now())

    def _show(self, flows: list[Flow], now: float) -> None:
        self.all_flows, self.now = flows, now
        self._fill()

    def _fill(self) -> None:
        """The loaded flows narrowed by the text filter (no database call)."""
        needle = self.query_one("#flows-filter", Input).value.strip().lower()
        flows = [
            f
            for f in self.all_flows
            if not needle or needle in " ".join([f.name, f.domain, f.agent, *f.triggers]).lower()
        ]
        self.flows = {str(f.id): f for f in flows}
        rows = []
        for f in flows:
            s = f.stats
            style = "bold red" if s.flagged else ("bright_black" if f.status == "disabled" else "")
            name = Text(
                ("⚑ " if s.flagged else "  ") + f.name, style=style, no_wrap=True, overflow="ellipsis"
            )
            rows.append(
                (
                    f.id,
                    [
                        name,
                        s.uses,
                        s.passes,
                        Text(str(s.fails), style="red" if s.fails else ""),
                        Text(_pct(s.effectiveness), style=style),
                        trend_text(s),
                        charts.outcome_text(s.recent_outcomes),
                        (iso(s.last_run_at) or "–")[:10],
                        f.status,
                        f.domain or "–",
                        f.agent or "(all)",
                    ],
                )
            )
        table = self.table("#flows-table")
        table.set_rows(rows)
        flagged = sum(1 for f in self.all_flows if f.stats.flagged)
        self.query_one("#flows-status", Static).update(
            f"{len(flows)} of {len(self.all_flows)} flows · {flagged} flagged · effectiveness = "
            f"passes / uses; trend = last {self.engine.settings.lifecycle.flow_trend_window} runs "
            f"vs the ones before"
        )
        self.load_detail(table.selected_key)

    # -- detail -------------------------------------------------------------------------------------
    @on(DataGrid.RowHighlighted, "#flows-table")
    def _highlighted(self, event: DataGrid.RowHighlighted) -> None:
        key = event.row_key.value if event.row_key else None
        if self.detail is None or str(self.detail.flow.id) != key:
            self.load_detail(key)

    @work(thread=True, exclusive=True, exit_on_error=False, group="flows.detail")
    def load_detail(self, key: str | None) -> None:
        self.deliver(self._show_detail, self.engine.flows.detail(int(key)) if key else None)

    def _show_detail(self, d: FlowDetail | None) -> None:
        self.detail = d
        plot = self.query_one("#flow-chart", PlotextPlot)
        spark = self.query_one("#flow-spark", Sparkline)
        if d is None:
            charts.message(plot, "effectiveness", "no flow selected")
            spark.data = []
            self.query_one("#flow-head", Static).update("")
            self.query_one("#flow-steps", Static).update("")
            return
        f, s = d.flow, d.flow.stats
        # A border title is markup: the stored name is escaped twice (markup, then controls).
        self.query_one("#flow-detail").border_title = f"flow {escape(visible(f.name, one_line=True))}"
        head = Text()
        head.append(f"{f.name} ", style="bold red" if s.flagged else "bold")
        head.append(f"{_pct(s.effectiveness)}% · {s.passes} of {s.uses} passed · ")
        head.append_text(trend_text(s))
        if s.flagged:
            head.append("  ⚑ flagged", style="bold red")
        self.query_one("#flow-head", Static).update(head)
        spark.data = [p.value for p in d.rolling]
        thr = self.engine.settings.lifecycle.flow_flag_below
        if not d.rolling:
            charts.message(plot, "effectiveness over time", "no runs yet")
        else:
            plt = charts.reset(plot, "effectiveness % after each run · ▬ pass · × fail", "days from now")
            xs = [(p.at - self.now) / DAY for p in d.rolling]
            plt.plot(
                xs,
                [p.value * 100 for p in d.rolling],
                color=charts.SERIES[0],
                marker=charts.LINE_MARKER,
            )
            runs = sorted(d.runs, key=lambda r: r.at)
            ok = [(r.at - self.now) / DAY for r in runs if r.outcome == "pass"]
            bad = [(r.at - self.now) / DAY for r in runs if r.outcome == "fail"]
            if ok:
                plt.scatter(ok, [100] * len(ok), color=charts.GREEN, marker="▬")
            if bad:
                plt.scatter(bad, [0] * len(bad), color=charts.RED, marker="×")
            charts.threshold(plt, thr * 100, charts.YELLOW, f"flagged below {thr * 100:g}%", xs[0])
            plt.ylim(0, 100)
            plot.refresh()
        self.query_one("#flow-steps", Static).update(self._body_text(d))

    def _body_text(self, d: FlowDetail) -> Text:
        f = d.flow
        t = Text()
        if f.description:
            t.append(f.description + "\n", style="italic")
        t.append(
            f"domain {f.domain or '–'} · agent {f.agent or '(all)'} · {f.status}"
            f"{' · needs approval' if f.needs_approval else ''}\n"
        )
        if f.triggers:
            t.append("triggers: " + ", ".join(f"“{x}”" for x in f.triggers) + "\n", style="dim")
        t.append("steps\n", style="bold")
        for i, step in enumerate(f.steps, 1):
            t.append(f" {i}. {step}\n")
        if d.runs:
            t.append("recent runs\n", style="bold")
        for r in d.runs[:12]:
            t.append(f" {(iso(r.at) or '')[:16].replace('T', ' ')} ")
            t.append(f"{r.outcome:<4}", style="green" if r.outcome == "pass" else "red")
            t.append(f" {r.agent or ''} {r.note[:40]}\n", style="dim")
        return t

    # -- actions ---------------------------------------------------------------------------------------
    def action_toggle_status(self) -> None:
        f = self.flows.get(self.table("#flows-table").selected_key or "")
        if f is None:
            self.notify("Select a flow first.", severity="warning", timeout=2)
            return
        new: FlowStatus = "disabled" if f.status == "active" else "active"
        effect = (
            "gates stop offering it for matching actions"
            if new == "disabled"
            else "gates offer it again for matching actions"
        )
        body = (
            f"Flow {f.name} (#{f.id}): status {f.status} → {new}; {effect}. Its {f.stats.uses} runs are kept."
        )
        self.confirm(
            f"{'Disable' if new == 'disabled' else 'Enable'} flow {f.name}?",
            body,
            lambda: self.set_status(f.id, new),
            confirm_label="Disable" if new == "disabled" else "Enable",
        )

    @work(thread=True, exclusive=False, exit_on_error=False, group="flows.edit")
    def set_status(self, flow_id: int, status: FlowStatus) -> None:
        f = self.engine.flows.set_status(flow_id, status, reason="from the console")
        self.app.call_from_thread(self.notify, f"Flow {f.name} is {f.status}.")
        self.wrote()

    def commands(self) -> list[PaneCommand]:
        return [
            PaneCommand(
                "Enable / disable selected flow", "Confirmed; runs are kept", self.action_toggle_status
            )
        ]
