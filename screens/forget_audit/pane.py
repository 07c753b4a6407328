"""Pane 7 — Forget & Audit: open a forget request (scope, match mode, reason), preview what it
matches (matched words highlighted, a count per kind), drop records from it and preview again,
execute it after typing FORGET (or withdraw it with a reason), see the verification level by level;
the cases with their deadlines (days left, OVERDUE); a second operator's approval where the
two-person rule is on; the audit log with filters (audit_log.py). Withdraw, approve and accept
residue: case_actions.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Select

from console.app.widgets.filter_input import FilterHint, FilterInput
from console.app.widgets.fmt import one_line
from console.app.widgets.safe import SafeStatic as Static  # data, never raw controls or markup
from console.app.widgets.table import DataGrid
from engine.forget.match import MATCH_MODES
from engine.forget.types import FORGET_SCOPES, ForgetPreview, ForgetRequest, ForgetResult
from screens.base import Pane, PaneCommand
from screens.forget_detail import cases_title, counts_text, detail, due_cell, marked_text

from .audit_log import CELL_MAX, ForgetAuditLog
from .case_actions import ForgetCaseActions


class ForgetAuditPane(ForgetCaseActions, ForgetAuditLog):
    PANE_ID = "forget"
    TITLE = "Forget & Audit"
    FILTER_SELECTOR = "#audit-filter"
    MAIN_SELECTOR = "#cases"
    ROW_ACTIONS = frozenset({"preview", "execute", "verify", "withdraw", "approve", "accept_residue"})

    BINDINGS = [
        *Pane.BINDINGS,
        Binding("n", "new_request", "New request", id="forget.new"),
        Binding("p", "preview", "Preview case", id="forget.preview"),
        Binding("X", "execute", "Execute (FORGET)", id="forget.execute"),
        Binding("V", "verify", "Verify case", id="forget.verify"),
        Binding("space", "mark", "Mark row", id="forget.mark"),
        Binding("x", "drop", "Drop marked", id="forget.drop"),
        Binding("w", "withdraw", "Withdraw case", id="forget.withdraw"),
        Binding("a", "approve", "Approve case", id="forget.approve"),
        Binding("A", "accept_residue", "Accept residue", show=False, id="forget.accept_residue"),
    ]

    @dataclass
    class ForgetPreviewed(Message):
        preview: ForgetPreview

    @dataclass
    class ForgetExecuted(Message):
        result: ForgetResult

    def __init__(self) -> None:
        super().__init__()
        self.cases: dict[str, ForgetRequest] = {}
        self.preview: ForgetPreview | None = None
        self.result: ForgetResult | None = None
        self._want_case: int | None = None
        self.marked: set[str] = set()  # preview rows ("kind:id") marked to drop from the case

    def compose(self) -> ComposeResult:
        with Horizontal(id="forget-form"):
            yield Select(
                [(s, s) for s in FORGET_SCOPES], value="memory", allow_blank=False, id="forget-scope"
            )
            yield Select(
                [(m, m) for m in MATCH_MODES], value="word", allow_blank=False, id="forget-match",
                tooltip="How a query scope matches: whole words (word), the words in order (phrase), "
                "or inside words too (substring)",
            )  # fmt: skip
            yield Input(placeholder="memory ids (1,2) · session id · agent · user · text", id="forget-value")
            yield Input(placeholder="reason (required) — enter previews", id="forget-reason")
        with Horizontal(id="forget-main"):
            yield DataGrid(id="forget-preview", flex_column="content")
            with VerticalScroll(id="case-detail-box"):
                yield Static("", id="case-detail")
            yield DataGrid(id="cases", flex_column="value")
        yield Static(
            "p preview · space/x drop rows · X execute · w withdraw · a approve · V verify",
            id="forget-status",
            classes="hint",
        )
        yield FilterInput(
            "audit",
            hint="#audit-warning",
            placeholder="audit filter: words in reason/summary · actor:NAME action:forg* "
            "target:memory:12 since:DATE",
            id="audit-filter",
        )
        yield FilterHint(id="audit-warning", classes="hint")
        yield DataGrid(id="audit", flex_column="summary")

    def on_mount(self) -> None:
        self.table("#forget-preview").add_columns("drop", "kind", "id", "why", "content")
        self.table("#cases").add_columns(
            "case", "status", "due", "scope", "value", "removes", "residue", "by"
        )
        self.table("#audit").add_columns("#", "at", "actor", "action", "target", "reason", "summary")
        self.query_one("#forget-preview").border_title = "preview"
        self.query_one("#cases").border_title = "forget cases"
        self.query_one("#case-detail-box").border_title = "case"
        self.query_one("#audit").border_title = "audit log"

    # -- data ------------------------------------------------------------------------------------------
    def refresh_data(self) -> None:
        super().refresh_data()
        self.load_cases()
        self.load_audit(self.query_one("#audit-filter", FilterInput).filter)

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.cases")
    def load_cases(self) -> None:
        self.deliver(self._show_cases, self.engine.forget.list())

    def _show_cases(self, cases: list[ForgetRequest]) -> None:
        self.cases = {str(c.id): c for c in cases}
        now = self.engine.clock.now()
        t = self.table("#cases")
        t.set_rows(
            (
                c.id,
                [
                    f"#{c.id}",
                    c.status,
                    due_cell(c, now),
                    c.scope_kind,
                    one_line(c.scope_value, CELL_MAX),
                    counts_text(c.counts) if c.counts else "–",
                    "–" if c.residue is None else c.residue,
                    c.requested_by,
                ],
            )
            for c in cases
        )
        t.border_title = cases_title(cases, now)
        if self._want_case is not None and t.select_key(self._want_case):
            self._want_case = None  # the case just previewed (it may be new)
        self._show_case(t.selected_key)

    @on(DataGrid.RowHighlighted, "#cases")
    def _case_highlighted(self, event: DataGrid.RowHighlighted) -> None:
        self._show_case(event.row_key.value if event.row_key else None)

    def _show_case(self, key: str | None) -> None:
        c = self.cases.get(key or "")
        if c is None:
            return
        t = detail(c, self.engine.clock.now(), notes=self.size.width >= 120)
        if self.result and self.result.request_id == c.id and self.result.verification:
            v = self.result.verification
            t.append(
                f"\nscanned {', '.join(f'{k}: {n}' for k, n in v.files.items())} · "
                f"{v.checked_substrings} substrings · WAL truncated {v.wal_truncated}"
            )
        self.query_one("#case-detail", Static).update(t)
        box = self.query_one("#case-detail-box")
        box.border_title = f"case #{c.id}"
        if self.preview is not None and self.preview.request.id != c.id:
            self._close_preview()  # another case: its detail, not the old preview

    # -- a new request -> preview -----------------------------------------------------------------------
    def prefill(self, **scope) -> None:
        """From another pane: e.g. prefill(memory_id=12) from Search."""
        if "memory_id" in scope:
            self.query_one("#forget-scope", Select).value = "memory"
            self.query_one("#forget-value", Input).value = str(scope["memory_id"])
        elif "session_id" in scope:
            self.query_one("#forget-scope", Select).value = "session"
            self.query_one("#forget-value", Input).value = str(scope["session_id"])
        self.focus_on(self.query_one("#forget-reason", Input))
        self.query_one("#forget-status", Static).update(
            "Give a reason and press enter to preview what would be forgotten."
        )

    def action_new_request(self) -> None:
        self.query_one("#forget-value", Input).focus()

    @on(Input.Submitted, "#forget-value, #forget-reason")
    def _submit(self) -> None:
        scope = self.query_one("#forget-scope", Select).value
        value = self.query_one("#forget-value", Input).value.strip()
        reason = self.query_one("#forget-reason", Input).value.strip()
        if not value:
            self.query_one("#forget-value", Input).focus()
            return
        if not reason:
            self.query_one("#forget-reason", Input).focus()
            self.notify("A forget request needs a reason.", severity="warning", timeout=3)
            return
        values = [v for v in value.replace(",", " ").split()] if scope == "memory" else value
        match = str(self.query_one("#forget-match", Select).value)
        self.create_and_preview(str(scope), values, reason, match)

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.preview")
    def create_and_preview(self, scope: str, values, reason: str, match: str = "word") -> None:
        req = self.engine.forget.open(scope, values, reason, match=match)
        pv = self.engine.forget.preview(req.id)
        self.deliver(self.post_message, self.ForgetPreviewed(pv))
        self.wrote()

    def action_preview(self) -> None:
        c = self._selected_case()
        if c is None:
            return
        if c.status not in ("open", "previewed"):
            self.notify(f"Case #{c.id} is {c.status}; there is nothing left to preview.", timeout=3)
            return
        self.preview_case(c.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.preview")
    def preview_case(self, rid: int) -> None:
        self.deliver(self.post_message, self.ForgetPreviewed(self.engine.forget.preview(rid)))
        self.wrote()

    @on(ForgetPreviewed)
    def _previewed(self, event: ForgetPreviewed) -> None:
        pv = self.preview = event.preview
        self.marked &= {f"{i.kind}:{i.id}" for i in pv.items}
        self._fill_preview()
        self.set_class(True, "-previewing")  # the preview takes the room of the case and the audit
        if not self.table("#cases").select_key(pv.request.id):
            self._want_case = pv.request.id  # a new case: select it once the list has it
            self.load_cases()
        self.query_one("#forget-reason", Input).value = ""
        self.query_one("#forget-status", Static).update(
            f"Case #{pv.request.id}: space marks preview rows, x drops them · X executes · w withdraws"
        )
        self.table("#cases").focus()

    def _fill_preview(self) -> None:
        pv = self.preview
        if pv is None:
            return
        t = self.table("#forget-preview")
        t.set_rows(
            (
                f"{i.kind}:{i.id}",
                [
                    "✗ drop" if f"{i.kind}:{i.id}" in self.marked else ("" if i.excludable else "·"),
                    i.kind,
                    i.id,
                    i.why,
                    marked_text(i),
                ],
            )
            for i in pv.items
        )
        dropped = sum(len(v) for v in pv.excluded.values())
        t.border_title = (
            f"preview of case #{pv.request.id}: {counts_text(pv.counts)}"
            + (f" · {dropped} dropped" if dropped else "")
            + (f" · {len(self.marked)} marked" if self.marked else "")
        )

    def _close_preview(self) -> None:
        self.preview = None
        self.marked.clear()
        self.table("#forget-preview").set_rows([])
        self.table("#forget-preview").border_title = "preview"
        self.set_class(False, "-previewing")

    # -- narrowing: mark preview rows, drop them, preview again ------------------------------------------
    def action_mark(self) -> None:
        t = self.table("#forget-preview")
        if self.preview is None:
            return
        if self.app.focused is not t:  # the first space goes to the preview's rows
            t.focus()
            self.say("Preview rows: j/k move, space marks a row, x drops the marked ones and previews again.")
            return
        key = t.selected_key
        if key is None:
            return
        item = next((i for i in self.preview.items if f"{i.kind}:{i.id}" == key), None)
        if item is None or not item.excludable:
            self.say("Only what the scope itself selected can be dropped; the rest follows from it.")
            return
        self.marked ^= {key}
        self._fill_preview()

    def action_drop(self) -> None:
        if self.preview is None:
            self.say("Preview a case first (p), then mark rows with space and drop them with x.")
            return
        keys = set(self.marked)
        cur = self.table("#forget-preview").selected_key
        if not keys and cur and self.app.focused is self.table("#forget-preview"):
            keys = {cur}
        items = [i for i in self.preview.items if f"{i.kind}:{i.id}" in keys and i.excludable]
        if not items:
            self.say("Mark the rows to drop with space first (only rows the scope selected).")
            return
        self.drop_items(self.preview.request.id, [(i.kind, i.id) for i in items])

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.preview")
    def drop_items(self, rid: int, items: list[tuple[str, str]]) -> None:
        pv = self.engine.forget.exclude(rid, items)
        self.deliver(self._dropped, pv)
        self.wrote()

    def _dropped(self, pv: ForgetPreview) -> None:
        self.marked.clear()
        self.post_message(self.ForgetPreviewed(pv))

    # -- execute + verify --------------------------------------------------------------------------------
    def action_execute(self) -> None:
        c = self._selected_case()
        if c is None:
            return
        if c.status not in ("open", "previewed"):
            self.notify(f"Case #{c.id} is already {c.status}.", severity="warning", timeout=3)
            return
        pv = self.preview if self.preview and self.preview.request.id == c.id else None
        if pv is None:
            self.notify(
                f"Preview case #{c.id} first (p), so you see what it removes.", severity="warning", timeout=4
            )
            return
        body = (
            f"Case #{c.id} ({c.scope_kind} {one_line(c.scope_value, 40)}) will PERMANENTLY remove "
            f"{counts_text(pv.counts)} — rows, full-text and vector index entries, copies in "
            f"proposals, audit previews and curator reports — then checkpoint the WAL and scan "
            f"the files for any residue. Tombstones keep only a sha256. This cannot be undone."
        )
        self.confirm(
            f"Forget case #{c.id}?",
            body,
            lambda: self.execute(c.id),
            confirm_label="Forget",
            require_text="FORGET",
            danger=True,
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.execute")
    def execute(self, rid: int) -> None:
        res = self.engine.forget.execute(rid, verify=True)
        self.deliver(self.post_message, self.ForgetExecuted(res))
        self.wrote()

    def action_verify(self) -> None:
        c = self._selected_case()
        if c is None:
            return
        if c.status not in ("executed", "verified"):
            self.notify(f"Case #{c.id} is {c.status}; execute it first.", severity="warning", timeout=3)
            return
        self.verify(c.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.execute")
    def verify(self, rid: int) -> None:
        ver = self.engine.forget.verify(rid)
        req = self.engine.forget.get(rid)
        self.deliver(
            self.post_message,
            self.ForgetExecuted(ForgetResult(rid, req.status, req.counts, ver.residue, ver)),
        )
        self.wrote()

    @on(ForgetExecuted)
    def _executed(self, event: ForgetExecuted) -> None:
        self.result = r = event.result
        self._close_preview()
        sev: Literal["information", "error"] = "information" if r.residue == 0 else "error"
        self.notify(
            f"Case #{r.request_id} {r.status}: removed {counts_text(r.counts)}; residue {r.residue}.",
            severity=sev,
            timeout=6,
        )

    def commands(self) -> list[PaneCommand]:
        return [
            PaneCommand("New forget request", "Scope, value, reason", self.action_new_request),
            PaneCommand("Preview selected case", "What it would remove", self.action_preview),
            PaneCommand("Execute selected case", "Type FORGET to confirm", self.action_execute),
            PaneCommand("Verify selected case", "Scan the files for residue", self.action_verify),
            PaneCommand("Drop marked preview rows", "Narrow the case, preview again", self.action_drop),
            PaneCommand("Withdraw selected case", "Close it with a reason", self.action_withdraw),
            PaneCommand("Approve selected case", "Second operator (two-person rule)", self.action_approve),
            PaneCommand(
                "Accept residue of selected case", "Recorded with a reason", self.action_accept_residue
            ),
            PaneCommand("Filter the audit log", "actor: action: target: since:", self.focus_filter),
        ]
