"""Pane 3 — Rules: every rule sorted by score and coloured by band, filters (text, status, domain,
agent), the selected rule's score history and projection charted beside its violations, last
reinforcement and source; pin / unpin, retire / revive, reinforce, set score (retire and set score
are confirmed); and the boot preview — exactly what an agent loads at start."""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Select
from textual_plotext import PlotextPlot

from console.app.widgets import charts
from console.app.widgets.filter_input import FilterHint, FilterInput
from console.app.widgets.safe import SafeStatic as Static  # data, never raw controls or markup
from console.app.widgets.table import DataGrid
from console.shared.text_safety import visible
from engine.clock import DAY
from engine.lifecycle.types import RULE_STATUSES, BootContext, Rule, RuleDetail, RuleFacets
from screens.base import Pane, PaneCommand
from screens.lifecycle_marks import Marks

from .add import AddRuleModal, NewRule
from .text import info_text, retire_text, rule_rows, score_change_text

COLUMNS = ("id", "score", "status", "rule", "viol", "reinforced", "pin", "agent", "domain")
LIMIT = 500
HISTORY_DAYS = 60  # score history charted this far back
REASON = "from the console"
Change = Literal["pin", "unpin", "reinforce", "retire", "revive"]
DONE = {
    "pin": "pinned",
    "unpin": "unpinned",
    "reinforce": "reinforced",
    "retire": "retired",
    "revive": "revived",
    "set_score": "score set",
}


class RulesPane(Pane):
    PANE_ID = "rules"
    TITLE = "Rules"
    FILTER_SELECTOR = "#rules-filter"
    MAIN_SELECTOR = "#rules-table"
    ROW_ACTIONS = frozenset({"mark"})
    TABLE_TITLE = "rules by score"

    BINDINGS = [
        *Pane.BINDINGS,
        Binding("space", "mark", "Mark", id="rules.mark"),
        Binding("n", "add_rule", "New rule…", id="rules.add"),
        Binding("p", "pin", "Pin/unpin", id="rules.pin"),
        Binding("r", "reinforce", "Reinforce", id="rules.reinforce"),
        Binding("x", "retire", "Retire…", id="rules.retire"),
        Binding("v", "revive", "Revive", id="rules.revive"),
        Binding("s", "set_score", "Set score…", id="rules.set_score"),
        Binding("b", "boot", "Boot preview", id="rules.boot"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rules: dict[str, Rule] = {}
        self.boot: BootContext | None = None  # what the boot preview shows
        self.detail: RuleDetail | None = None
        self.now = 0.0
        self._facets: tuple | None = None
        self.marks = Marks()

    def compose(self) -> ComposeResult:
        with Horizontal(id="rules-filters"):
            yield FilterInput(
                "rules",
                hint="#rules-filter-hint",
                placeholder="filter rules: words status: domain: agent: pinned:  (/ focuses here)",
                id="rules-filter",
            )
            yield Select([(s, s) for s in RULE_STATUSES], prompt="any status", id="rf-status")
            yield Select([], prompt="any domain", id="rf-domain")
            yield Select([], prompt="any agent", id="rf-agent")
        yield FilterHint(id="rules-filter-hint")
        yield Static("loading rules…", id="rules-status", classes="hint")
        with Horizontal(id="rules-main"):
            yield DataGrid(id="rules-table", flex_column="rule", flex_min=24)
            with Vertical(id="rule-side"):
                with Vertical(id="rule-detail", classes="panel"):
                    yield PlotextPlot(id="rule-chart")
                    yield Static("", id="rule-info")
                with VerticalScroll(id="boot-panel", classes="panel"):
                    yield Static("", id="boot-text", markup=False)

    def on_mount(self) -> None:
        self._id_column = self.table("#rules-table").add_columns(*COLUMNS)[0]
        self.table("#rules-table").border_title = self.TABLE_TITLE
        self.query_one("#rule-detail").border_title = "rule"
        self.query_one("#boot-panel").border_title = "boot preview"
        self.query_one("#boot-panel").display = False

    # -- loading ------------------------------------------------------------------------------------
    def filters(self) -> dict:
        def val(sel: str):
            w = self.query_one(sel, Select)
            return None if w.is_blank() else w.value

        typed = self.query_one("#rules-filter", FilterInput).filter.kwargs()  # the one language (#27)
        return {"status": val("#rf-status"), "domain": val("#rf-domain"), "agent": val("#rf-agent"), **typed}

    def refresh_data(self) -> None:
        super().refresh_data()
        self.load(self.filters())
        if self.query_one("#boot-panel").display:
            self.load_boot(self.filters()["agent"])

    @on(FilterInput.Parsed, "#rules-filter")
    @on(Select.Changed, "#rf-status, #rf-domain, #rf-agent")
    def _filters_changed(self) -> None:
        self.load(self.filters())
        if self.query_one("#boot-panel").display:
            self.load_boot(self.filters()["agent"])

    @work(thread=True, exclusive=True, exit_on_error=False, group="rules.list")
    def load(self, filters: dict) -> None:
        facets = self.engine.rules.facets()
        rules = self.engine.rules.list(order="score", limit=LIMIT, **filters)
        counts = self.engine.rules.counts()
        self.deliver(self._show, rules, facets, counts, self.engine.clock.now())

    def _show(self, rules: list[Rule], facets: RuleFacets, counts: dict[str, int], now: float) -> None:
        self.now = now
        self._set_facets(facets)
        self.rules = {str(r.id): r for r in rules}
        self.marks.keep_only(self.rules)
        table = self.table("#rules-table")
        table.set_rows(rule_rows(rules, now, self.marks))
        table.border_title = self.marks.title(self.TABLE_TITLE)
        shown = (
            f"{len(rules)} of {facets.total} rules" if len(rules) < facets.total else f"{len(rules)} rules"
        )
        by = " · ".join(f"{s} {counts.get(s, 0)}" for s in RULE_STATUSES)
        self.query_one("#rules-status", Static).update(f"{shown} · {by}")
        self.load_detail(table.selected_key)

    def _set_facets(self, facets: RuleFacets) -> None:
        key = (tuple(facets.domains), tuple(facets.agents))
        if key == self._facets:
            return
        self._facets = key
        self.query_one("#rules-filter", FilterInput).set_known(domain=facets.domains, agent=facets.agents)
        for sel, values in (("#rf-domain", facets.domains), ("#rf-agent", facets.agents)):
            w = self.query_one(sel, Select)
            keep = None if w.is_blank() else w.value
            with self.prevent(Select.Changed):
                # Stored names: plain Text with controls spelled out (never markup).
                w.set_options(
                    [(Text(visible(v, one_line=True)) if v else "(none: global)", v) for v in values]
                )
                if keep in values:
                    w.value = keep

    # -- detail -------------------------------------------------------------------------------------
    @on(DataGrid.RowHighlighted, "#rules-table")
    def _highlighted(self, event: DataGrid.RowHighlighted) -> None:
        key = event.row_key.value if event.row_key else None
        if self.detail is None or str(self.detail.rule.id) != key:
            self.load_detail(key)

    @work(thread=True, exclusive=True, exit_on_error=False, group="rules.detail")
    def load_detail(self, key: str | None) -> None:
        detail = self.engine.rules.detail(int(key)) if key else None
        self.deliver(self._show_detail, detail)

    def _show_detail(self, d: RuleDetail | None) -> None:
        self.detail = d
        plot = self.query_one("#rule-chart", PlotextPlot)
        info = self.query_one("#rule-info", Static)
        if d is None:
            charts.box(self.query_one("#rule-detail"), "rule", [])
            charts.message(plot, "score history", "no rule selected")
            info.update("")
            return
        r, now = d.rule, d.projection.points[0].at if d.projection.points else self.now
        plt = charts.reset(plot, "", "days from now")
        xs, ys = charts.step_series([((h.at - now) / DAY, h.old_score, h.new_score) for h in d.history])
        xs, ys = charts.clip_left(xs, ys, -HISTORY_DAYS)
        series = []
        if xs:
            xs.append(0.0)
            ys.append(r.score)
            plt.plot(xs, ys, color=charts.SERIES[0], marker=charts.LINE_MARKER)
            series.append((f"{HISTORY_DAYS} d of history", charts.SERIES[0]))
        plt.plot(
            [p.day for p in d.projection.points],
            [p.value for p in d.projection.points],
            color=charts.SERIES[1],
            marker=charts.LINE_MARKER,
        )
        series.append(("30 d if not reinforced", charts.SERIES[1]))
        right = d.projection.points[-1].day if d.projection.points else 30.0
        for edge, color, label in charts.BAND_LINES:
            charts.threshold(plt, edge, color, label, right * 0.4)
        plt.xlim(min([*xs, 0.0]), right)
        charts.box(self.query_one("#rule-detail"), f"rule #{r.id} · score", series)
        plt.ylim(0, 10.5)
        plot.refresh()
        info.update(info_text(d, now))

    # -- boot preview -------------------------------------------------------------------------------
    def action_boot(self) -> None:
        panel = self.query_one("#boot-panel")
        panel.display = not panel.display
        self.query_one("#rule-detail").display = not panel.display
        if panel.display:
            self.load_boot(self.filters()["agent"])

    @work(thread=True, exclusive=True, exit_on_error=False, group="rules.boot")
    def load_boot(self, agent: str | None) -> None:
        self.deliver(self._show_boot, self.engine.boot.context(agent or None))

    def _show_boot(self, ctx: BootContext) -> None:
        self.boot = ctx
        who = f"agent {ctx.agent}" if ctx.agent else "every agent (choose one with the agent filter)"
        self.query_one(
            "#boot-panel"
        ).border_title = f"boot preview · {who} · {len(ctx.rules)} rules · ~{ctx.tokens} tokens"
        self.query_one("#boot-text", Static).update(ctx.text)

    # -- actions on the selected rule -----------------------------------------------------------------
    def selected(self) -> Rule | None:
        rule = self.rules.get(self.table("#rules-table").selected_key or "")
        if rule is None:
            self.notify("Select a rule first.", severity="warning", timeout=2)
        return rule

    def action_mark(self) -> None:
        table = self.table("#rules-table")
        if (key := table.selected_key) is None:
            return
        self.marks.toggle(key)
        table.update_cell(key, self._id_column, self.marks.cell(key, key))
        table.border_title = self.marks.title(self.TABLE_TITLE)
        table.action_cursor_down()

    def marked_bulk(self, change: Change, does: str) -> bool:
        """With rows marked: one confirmation with the count, then `change` on each; True if so."""
        rules = [self.rules[k] for k in self.marks.keys if k in self.rules]
        if not rules:
            return False
        ids = ", ".join(f"#{r.id}" for r in rules[:20]) + ("…" if len(rules) > 20 else "")
        self.confirm(
            f"{change.capitalize()} {len(rules)} marked rules?",
            f"{change.capitalize()} rules {ids}: {does}\nEach change is audited.",
            lambda: self.change_many(change, [r.id for r in rules]),
            confirm_label=f"{change.capitalize()} {len(rules)}",
            danger=change == "retire" and any(r.status == "critical" for r in rules),
        )
        return True

    @work(thread=True, exclusive=False, exit_on_error=False, group="rules.edit")
    def change_many(self, change: Change, ids: list[int]) -> None:
        rules = self.engine.rules
        act = {"pin": rules.pin, "reinforce": rules.reinforce, "retire": rules.retire}[change]
        for i in ids:
            act(i, reason=REASON)
        self.app.call_from_thread(self.marks.clear)
        self.app.call_from_thread(self.say, f"{len(ids)} rules {DONE[change]}.")
        self.wrote()

    def action_add_rule(self) -> None:
        f = self.filters()  # the agent and domain filters prefill the dialog
        self.app.push_screen(AddRuleModal(f["agent"] or "", f["domain"] or ""), self._add_entered)

    def _add_entered(self, new: NewRule | None) -> None:
        if new is not None:
            self.add_rule(new)

    @work(thread=True, exclusive=False, exit_on_error=False, group="rules.edit")
    def add_rule(self, n: NewRule) -> None:
        r = self.engine.rules.add(n.text, score=n.score, agent=n.agent, domain=n.domain, reason=REASON)
        self.app.call_from_thread(self.say, f"Rule #{r.id} added: score {r.score:g}, {r.status}.")
        self.wrote()

    def action_pin(self) -> None:
        if self.marked_bulk("pin", "score and status frozen (no decay)."):
            return
        if (r := self.selected()) is not None:
            self.change("unpin" if r.pinned else "pin", r.id)

    def action_reinforce(self) -> None:
        if self.marked_bulk("reinforce", "score +1 each, decay clock restarts."):
            return
        if (r := self.selected()) is not None:
            self.change("reinforce", r.id)

    def action_revive(self) -> None:
        if (r := self.selected()) is None:
            return
        if r.status != "retired":
            self.notify(f"Rule #{r.id} is {r.status}, not retired.", timeout=3)
            return
        self.change("revive", r.id)

    def action_retire(self) -> None:
        if self.marked_bulk("retire", "they stop loading at boot; nothing is deleted (v revives)."):
            return
        if (r := self.selected()) is None:
            return
        if r.status == "retired":
            self.notify(f"Rule #{r.id} is already retired (v revives it).", timeout=3)
            return
        self.confirm(
            f"Retire rule #{r.id}?",
            retire_text(r),
            lambda: self.change("retire", r.id),
            confirm_label="Retire",
            danger=r.status == "critical",
        )

    def action_set_score(self) -> None:
        if (r := self.selected()) is None:
            return
        self.prompt(
            f"New score for rule #{r.id} (0–10), now {r.score:g}:",
            lambda v: self._score_entered(r, v),
            value=f"{r.score:g}",
        )

    def _score_entered(self, r: Rule, value: str) -> None:
        try:
            s = float(value)
            if not 0 <= s <= 10:
                raise ValueError
        except ValueError:
            self.notify(f"A rule score is a number from 0 to 10, not {value!r}.", severity="warning")
            return
        self.prompt(
            f"Why set rule #{r.id} to {s:g}? (required, recorded in the audit log)",
            lambda why: self._confirm_score(r, s, why),
        )

    def _confirm_score(self, r: Rule, s: float, why: str) -> None:
        if not why.strip():
            self.notify("Setting a score needs a reason.", severity="warning")
            return
        self.confirm(
            f"Set the score of rule #{r.id}?",
            score_change_text(r, s, why.strip()),
            lambda: self.set_score(r.id, s, why.strip()),
            confirm_label="Set score",
        )

    @work(thread=True, exclusive=False, exit_on_error=False, group="rules.edit")
    def change(self, change: Change, rule_id: int) -> None:
        rules = self.engine.rules
        act = {
            "pin": rules.pin,
            "unpin": rules.unpin,
            "reinforce": rules.reinforce,
            "retire": rules.retire,
            "revive": rules.revive,
        }[change]
        before = rules.get(rule_id)
        self._changed(change, before, act(rule_id, reason=REASON))

    @work(thread=True, exclusive=False, exit_on_error=False, group="rules.edit")
    def set_score(self, rule_id: int, score: float, why: str) -> None:
        before = self.engine.rules.get(rule_id)
        self._changed("set_score", before, self.engine.rules.set_score(rule_id, score, reason=why))

    def _changed(self, change: str, before: Rule, after: Rule) -> None:
        """(In the worker) say what changed, then refresh every pane."""
        self.app.call_from_thread(
            self.notify,
            f"Rule #{before.id} {DONE[change]}: score {before.score:g} → {after.score:g}, "
            f"{before.status} → {after.status}{' · pinned' if after.pinned else ''}.",
        )
        self.wrote()

    def commands(self) -> list[PaneCommand]:
        return [
            PaneCommand(
                "Mark / unmark the selected rule", "p / r / x then act on the marked", self.action_mark
            ),
            PaneCommand(
                "Pin / unpin selected rule", "Freeze or unfreeze its score and status", self.action_pin
            ),
            PaneCommand("Reinforce selected rule", "Score +1, decay clock restarts", self.action_reinforce),
            PaneCommand("Retire selected rule", "Stops loading at boot (confirmed)", self.action_retire),
            PaneCommand("Revive selected rule", "Back to score 5 or more", self.action_revive),
            PaneCommand(
                "Set score of selected rule", "0–10 with a reason (confirmed)", self.action_set_score
            ),
            PaneCommand(
                "Boot preview", "What the agent in the agent filter loads at start", self.action_boot
            ),
        ]
