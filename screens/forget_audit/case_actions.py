"""The Forget & Audit pane's decisions on a selected case that remove nothing: withdraw it with a
reason, approve it (a second operator, under the two-person rule), accept an executed case's
residue with a reason. ForgetAuditPane (pane.py) inherits these; the cases are the pane's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work

from console.app.widgets.fmt import one_line
from engine.forget.types import ForgetPreview, ForgetRequest
from screens.base import Pane
from screens.forget_detail import counts_text


class ForgetCaseActions(Pane):
    """w, a, A on the selected case; the pane fills `cases` and `preview`."""

    ROW_ACTIONS = frozenset({"withdraw", "approve", "accept_residue"})

    cases: dict[str, ForgetRequest]
    preview: ForgetPreview | None

    if TYPE_CHECKING:  # the pane's own (pane.py)

        def load_cases(self) -> Any: ...
        def _close_preview(self) -> None: ...

    # -- withdraw, approve, accept residue --------------------------------------------------------------
    def action_withdraw(self) -> None:
        c = self._selected_case()
        if c is None:
            return
        if c.status not in ("open", "previewed"):
            self.say(f"Case #{c.id} is {c.status}; only an open case can be withdrawn.", severity="warning")
            return
        self.prompt(
            f"Withdraw case #{c.id} (nothing is removed; its query text is kept only as a hash). Reason:",
            lambda reason: self.withdraw(c.id, reason),
            validate=lambda v: None if v.strip() else "a withdrawal needs a reason",
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.execute")
    def withdraw(self, rid: int, reason: str) -> None:
        r = self.engine.forget.withdraw(rid, reason)
        self.deliver(self._case_changed, r, f"Case #{r.id} withdrawn: {one_line(reason, 60)}")
        self.wrote()

    def action_approve(self) -> None:
        c = self._selected_case()
        if c is None:
            return
        self.confirm(
            f"Approve case #{c.id}?",
            f"You approve the previewed scope of case #{c.id} ({counts_text(c.counts)}), requested by "
            f"{c.requested_by}. A new preview or a dropped record needs a new approval.",
            lambda: self.approve(c.id),
            confirm_label="Approve",
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.execute")
    def approve(self, rid: int) -> None:
        r = self.engine.forget.approve(rid)
        self.deliver(self._case_changed, r, f"Case #{r.id} approved by {self.engine.actor}.")
        self.wrote()

    def action_accept_residue(self) -> None:
        c = self._selected_case()
        if c is None:
            return
        if c.status != "executed":
            self.say(f"Case #{c.id} is {c.status}; only an executed case with residue can have it accepted.")
            return
        self.prompt(
            f"Accept the residue ({c.residue}) of case #{c.id}: it stays 'executed', not 'verified'. Reason:",
            lambda reason: self.accept_residue(c.id, reason),
            validate=lambda v: None if v.strip() else "accepting residue needs a reason",
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.execute")
    def accept_residue(self, rid: int, reason: str) -> None:
        r = self.engine.forget.accept_residue(rid, reason)
        self.deliver(self._case_changed, r, f"Case #{r.id}: residue accepted.")
        self.wrote()

    def _case_changed(self, r: ForgetRequest, message: str) -> None:
        if self.preview is not None and self.preview.request.id == r.id and r.status == "withdrawn":
            self._close_preview()
        self.say(message)
        self.load_cases()

    def _selected_case(self) -> ForgetRequest | None:
        c = self.cases.get(self.table("#cases").selected_key or "")
        if c is None:
            self.notify("Select a forget case first.", severity="warning", timeout=2)
        return c
