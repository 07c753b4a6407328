"""The Decay pane's writes: mark forecast rows (space), archive the marked memories now (a) or pin
the marked rows (p), each confirmed and audited; and D, a decay pass at the real clock, previewed
by the engine's dry run, then confirmed. DecayPane (pane.py) inherits these."""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.widgets.data_table import ColumnKey

from engine.lifecycle.types import DecayPassResult
from screens.base import Pane
from screens.lifecycle_marks import Marks, outcomes_text

from .view import decay_preview_text, decay_summary


class DecayActions(Pane):
    """The marked rows' actions and the decay pass; the pane fills `marks` and the forecast table."""

    ROW_ACTIONS = frozenset({"mark", "archive_marked", "pin_marked"})

    TABLE_TITLE: ClassVar[str]
    marks: Marks
    _id_column: ColumnKey

    # -- marking and acting on the marked rows ----------------------------------------------------------
    def action_mark(self) -> None:
        grid = self.table("#decay-forecast")
        key = grid.selected_key
        if not key:
            return
        self.marks.toggle(key)
        grid.update_cell(key, self._id_column, self.marks.cell(key, key))
        grid.border_title = self.marks.title(self.TABLE_TITLE)
        grid.action_cursor_down()

    def _targets(self) -> tuple[list[int], list[int]]:
        keys = self.marks.targets(self.table("#decay-forecast").selected_key)
        return [int(k[1:]) for k in keys if k[0] == "m"], [int(k[1:]) for k in keys if k[0] == "r"]

    def action_archive_marked(self) -> None:
        mems, rules = self._targets()
        if not mems:
            self.say("Archive now acts on memories: mark some (space) or select one.", severity="warning")
            return
        skipped = f"\n{len(rules)} marked rules are left alone (rules retire, they are not archived)."
        self.confirm(
            f"Archive {len(mems)} memories now?",
            f"{len(mems)} memories move to the archived tier now, ahead of decay: "
            + ", ".join(f"m{i}" for i in mems[:20])
            + ("…" if len(mems) > 20 else "")
            + (skipped if rules else "")
            + "\nAudited; memory restore ID brings one back.",
            lambda: self.bulk("archive", mems, []),
            confirm_label=f"Archive {len(mems)}",
        )

    def action_pin_marked(self) -> None:
        mems, rules = self._targets()
        if not (mems or rules):
            return
        self.confirm(
            f"Pin {len(mems) + len(rules)} rows?",
            f"Pin {len(mems)} memories and {len(rules)} rules: "
            + ", ".join(([f"m{i}" for i in mems] + [f"r{i}" for i in rules])[:20])
            + "\nPinned memories never decay or archive; pinned rules keep their score and status.",
            lambda: self.bulk("pin", mems, rules),
            confirm_label="Pin",
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="decay.edit")
    def bulk(self, what: str, mems: list[int], rules: list[int]) -> None:
        eng, why = self.engine, f"from the console: {what} from the decay forecast"
        # The memories in one engine call (one transaction, per-id outcomes); rules one by one.
        outcomes = (eng.memories.archive_many if what == "archive" else eng.memories.pin_many)(
            mems, reason=why
        )
        for i in rules:
            eng.rules.pin(i, reason=why)
        self.deliver(self.marks.clear)
        self.wrote()
        done = "archived" if what == "archive" else "pinned"
        note = outcomes_text(outcomes, done) if mems else ""
        self.deliver(self.say, note + (f" {len(rules)} rules pinned." if rules else ""))

    # -- run a pass now (the one write here) ------------------------------------------------------------
    def action_run_decay(self) -> None:
        """Preview the pass at the real clock (the engine's dry run), then ask, then run it."""
        self.say("Counting what a decay pass would change…")
        self._preview_pass()

    @work(thread=True, exclusive=True, exit_on_error=False, group="decay.run")
    def _preview_pass(self) -> None:
        self.deliver(self._ask_run, self.engine.decay.run(dry_run=True))

    def _ask_run(self, r: DecayPassResult) -> None:
        self.confirm(
            "Run a decay pass now?",
            decay_preview_text(r),
            self._run_pass,
            confirm_label="Run decay",
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="decay.run")
    def _run_pass(self) -> None:
        r = self.engine.decay.run()
        self.wrote()
        self.deliver(self.say, "Decay pass done: " + decay_summary(r))
