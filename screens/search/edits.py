"""The Search pane's actions on hits: the selected row, or the rows marked with space (pin,
importance, archive, restore, forget, open the source). Each write runs in a worker, audited, with a
confirmation that states what changes."""

from __future__ import annotations

from textual import work

from console.app.widgets.table import DataGrid
from engine.errors import InvalidInput
from engine.recalls.checks import MAX_CHECK_K
from engine.types import Hit, SearchResult
from screens.base import Pane
from screens.lifecycle_marks import outcomes_text

from .forms import MemoryForm


class HitEdits(Pane):
    """What SearchPane does to its hits (it holds `hits` and `marked`; the bindings are its own)."""

    hits: dict[str, Hit]
    marked: list[int]
    result: SearchResult | None
    searched_filters: dict

    CHECK_K = 10  # a check pinned from a hit: the hit stays in the top 10 (or its rank, if lower)

    # -- actions on the selected hit ----------------------------------------------------------------------
    def selected_id(self) -> int | None:
        key = self.query_one("#results", DataGrid).selected_key
        return int(key) if key else None

    def _need_hit(self) -> int | None:
        mid = self.selected_id()
        if mid is None:
            self.notify("Select a hit first.", severity="warning", timeout=2)
        return mid

    # -- marking: space marks rows; a / p / f then act on the marked rows ---------------------------
    def action_mark(self) -> None:
        if (mid := self._need_hit()) is None:
            return
        if mid in self.marked:
            self.marked.remove(mid)
        else:
            self.marked.append(mid)
        table = self.query_one("#results", DataGrid)
        table.update_cell(str(mid), "mark", "✓" if mid in self.marked else "")
        self._show_marks()
        if table.cursor_row < table.row_count - 1:
            table.move_cursor(row=table.cursor_row + 1)

    def _show_marks(self) -> None:
        n = len(self.marked)
        self.query_one("#results", DataGrid).border_title = (
            f"{n} marked · a / p / f act on them · space unmarks" if n else None
        )

    def _marked_text(self, ids: list[int]) -> str:
        lines = [f"#{m} “{self.hits[str(m)].content[:60]}”" for m in ids[:8]]
        return "\n".join(lines) + (f"\n… and {len(ids) - 8} more" if len(ids) > 8 else "")

    def action_pin(self) -> None:
        if self.marked:
            ids = list(self.marked)
            body = (
                f"Pin {len(ids)} marked memories (decay stops; already pinned ones stay pinned):\n\n"
                + self._marked_text(ids)
            )
            self.confirm(f"Pin {len(ids)} memories?", body, lambda: self.pin_many(ids), confirm_label="Pin")
        elif (mid := self._need_hit()) is not None:
            self.toggle_pin(mid)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.edit")
    def pin_many(self, ids: list[int]) -> None:
        outcomes = self.engine.memories.pin_many(ids, reason="pinned from the console (marked)")
        self.app.call_from_thread(self._done_marked, outcomes_text(outcomes, "pinned"))
        self.wrote()

    def _done_marked(self, note: str) -> None:
        self.marked = []
        self.notify(note)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.edit")
    def toggle_pin(self, mid: int) -> None:
        mem = self.engine.memories.get(mid)
        if mem.pinned:
            self.engine.memories.unpin(mid, reason="unpinned from the console")
        else:
            self.engine.memories.pin(mid, reason="pinned from the console")
        self.app.call_from_thread(self.notify, f"Memory #{mid} {'unpinned' if mem.pinned else 'pinned'}.")
        self.wrote()

    def action_importance(self) -> None:
        if (mid := self._need_hit()) is None:
            return
        hit = self.hits[str(mid)]
        self.prompt(
            f"Importance of memory #{mid} (0–1), now {hit.breakdown.importance:.2f}:",
            lambda v: self.set_importance(mid, v),
            value=f"{hit.breakdown.importance:.2f}",
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.edit")
    def set_importance(self, mid: int, value: str) -> None:
        try:
            importance = float(value)
        except ValueError:
            raise InvalidInput(f"importance must be a number between 0 and 1, not {value!r}") from None
        mem = self.engine.memories.set_importance(mid, importance, reason="set from the console")
        self.app.call_from_thread(self.notify, f"Memory #{mid} importance is {mem.importance:.2f}.")
        self.wrote()

    def action_archive(self) -> None:
        if self.marked:
            ids = [m for m in self.marked if self.hits[str(m)].tier != "archived"]
            if not ids:
                self.notify("Every marked memory is already archived.", timeout=2)
                return
            body = (
                f"{len(ids)} marked memories: tier → archived (nothing is deleted; each can be "
                f"restored with R):\n\n" + self._marked_text(ids)
            )
            self.confirm(
                f"Archive {len(ids)} memories?", body, lambda: self.archive_many(ids), confirm_label="Archive"
            )
            return
        if (mid := self._need_hit()) is None:
            return
        hit = self.hits[str(mid)]
        if hit.tier == "archived":
            self.notify(f"Memory #{mid} is already archived.", timeout=2)
            return
        body = (
            f"Memory #{mid}: tier {hit.tier} → archived.\n\n“{hit.content[:200]}”\n\n"
            f"It leaves default searches (still found with the tier filter 'all tiers'); "
            f"nothing is deleted and it can be restored."
        )
        self.confirm(f"Archive memory #{mid}?", body, lambda: self.archive(mid), confirm_label="Archive")

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.edit")
    def archive(self, mid: int) -> None:
        self.engine.memories.archive(mid, reason="archived from the console")
        self.app.call_from_thread(self.notify, f"Memory #{mid} archived.")
        self.wrote()

    def action_restore(self) -> None:
        if (mid := self._need_hit()) is None:
            return
        hit = self.hits[str(mid)]
        if hit.tier != "archived":
            self.notify(f"Memory #{mid} is not archived (tier {hit.tier}).", severity="warning", timeout=2)
            return
        body = (
            f"Memory #{mid}: tier archived → active.\n\n“{hit.content[:200]}”\n\n"
            f"It returns to default searches and decays again from now."
        )
        self.confirm(f"Restore memory #{mid}?", body, lambda: self.restore(mid), confirm_label="Restore")

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.edit")
    def restore(self, mid: int) -> None:
        self.engine.memories.restore(mid, reason="restored from the console")
        self.app.call_from_thread(self.notify, f"Memory #{mid} restored to active.")
        self.wrote()

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.edit")
    def archive_many(self, ids: list[int]) -> None:
        outcomes = self.engine.memories.archive_many(ids, reason="archived from the console (marked)")
        self.app.call_from_thread(self._done_marked, outcomes_text(outcomes, "archived"))
        self.wrote()

    def action_forget(self) -> None:
        if self.marked:  # the Forget pane previews them and asks once, stating the count
            ids, self.marked = list(self.marked), []
            self.app.start_forget(memory_id=" ".join(map(str, ids)))
        elif (mid := self._need_hit()) is not None:
            self.app.start_forget(memory_id=mid)

    def action_source(self) -> None:
        if (mid := self._need_hit()) is not None:
            self.open_source(mid)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.source")
    def open_source(self, mid: int) -> None:
        mem = self.engine.memories.get(mid)
        if not mem.session_id:
            self.app.call_from_thread(
                self.notify, f"Memory #{mid} has no source session.", severity="warning"
            )
            return
        self.deliver(self.app.open_message, mem.session_id, mem.message_id)

    # -- a retrieval check from a hit (#26): "for this search, this memory stays in the top k" -----------
    def action_pin_check(self) -> None:
        if (mid := self._need_hit()) is None:
            return
        res = self.result
        if res is None or not res.query.strip():
            self.notify("A check pins a search's query: search first.", severity="warning", timeout=3)
            return
        rank = next((i for i, h in enumerate(res.hits, 1) if h.id == mid), self.CHECK_K)
        k = min(max(self.CHECK_K, rank), MAX_CHECK_K)
        filters = dict(self.searched_filters)
        shown = ", ".join(f"{n}:{v}" for n, v in filters.items() if v is not None) or "no filters"
        body = (
            f"For the search “{res.query}” ({shown}), memory #{mid} must stay in the top {k} "
            f"(it is #{rank} now):\n\n“{self.hits[str(mid)].content[:200]}”\n\n"
            "The check runs again after each curator apply or undo, forget, decay pass and import "
            "that touches this memory; a failure shows in the header and in Recalls (8) with why not."
        )
        self.confirm(
            f"Pin a retrieval check on memory #{mid}?",
            body,
            lambda: self.pin_check(res.query, mid, k, filters),
            confirm_label="Pin check",
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.check")
    def pin_check(self, query: str, mid: int, k: int, filters: dict) -> None:
        # mode None: the check runs as the pane searched (and as an agent's recall does): hybrid
        # once the model is ready, never pinned to the keyword-only fallback of a cold start.
        c = self.engine.checks.add(query, mid, k, **filters)
        self.app.call_from_thread(
            self.notify, f"Check #{c.id} pinned: memory #{mid} in the top {c.k} ({c.status})."
        )
        self.wrote()

    # -- writing: a new memory, a memory's new text -------------------------------------------------
    def action_new_memory(self) -> None:
        def done(fields: dict | None) -> None:
            if fields is not None:
                self.add_memory(fields)

        self.app.push_screen(MemoryForm("New memory"), done)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.edit")
    def add_memory(self, fields: dict) -> None:
        r = self.engine.memories.add_ex(reason="added from the console", **fields)
        note = f"Reinforced existing memory #{r.id} (near-duplicate)." if r.deduplicated else None
        self.app.call_from_thread(self.notify, note or f"Memory #{r.id} added.")
        self.wrote()

    def action_edit_memory(self) -> None:
        if (mid := self._need_hit()) is None:
            return

        def done(fields: dict | None) -> None:
            if fields is not None:
                self.edit_memory(mid, fields["content"])

        self.app.push_screen(MemoryForm(f"Edit memory #{mid}", self.hits[str(mid)].content), done)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.edit")
    def edit_memory(self, mid: int, content: str) -> None:
        # Audited "edit"; curator proposals naming it refuse approval now (their members changed).
        self.engine.memories.edit(mid, content, reason="edited from the console")
        self.app.call_from_thread(self.notify, f"Memory #{mid} edited.")
        self.wrote()
