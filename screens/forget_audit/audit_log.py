"""The Forget & Audit pane's audit log: the filtered list of audit rows under the cases
(`actor: action: target: since:` and words), in the one filter language."""

from __future__ import annotations

import json

from textual import on, work

from console.app.widgets.filter_input import FilterInput
from console.app.widgets.fmt import one_line, when
from engine.filter_language import Filter, parse_filter
from screens.base import Pane

CELL_MAX = 2000  # a cell holds the whole line; the flexible column cuts it to the width


def parse_audit_filter(text: str) -> dict:
    """'actor:dana action:forg* target:memory:12 since:2026-01-01 canary' -> eng.audit.log kwargs
    (the one filter language, engine/filter_language): a bare word searches reasons and summaries
    (`text`), `action:forg*` is a prefix; a bad token is a FilterError naming it."""
    return parse_filter(text, "audit").kwargs()


class ForgetAuditLog(Pane):
    """The audit log table (#audit) and its filter (#audit-filter); ForgetAuditPane composes both."""

    @on(FilterInput.Parsed, "#audit-filter")
    def _audit_filter(self, event: FilterInput.Parsed) -> None:
        self.load_audit(event.filter)  # a bad token: the hint names it, the rows stay as they were

    @work(thread=True, exclusive=True, exit_on_error=False, group="forget.audit")
    def load_audit(self, f: Filter) -> None:
        self.deliver(self._show_audit, self.engine.audit.log(**f.kwargs(), limit=500))

    def _show_audit(self, entries) -> None:
        self.query_one("#audit-filter", FilterInput).set_known(
            actor={e.actor for e in entries}, action={e.action for e in entries}
        )
        t = self.table("#audit")
        t.set_rows(
            (
                e.id,
                [
                    e.id,
                    when(e.at),
                    e.actor,
                    e.action,
                    f"{e.target_kind}:{e.target_id}",
                    one_line(e.reason or "", 40),
                    one_line(
                        e.summary
                        if isinstance(e.summary, str)
                        else json.dumps(e.summary, ensure_ascii=False),
                        CELL_MAX,
                    ),
                ],
            )
            for e in entries
        )
        t.border_title = f"audit log ({len(entries)}{'+' if len(entries) >= 500 else ''})"
