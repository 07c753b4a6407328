"""Sorting and export for every console table (issue #27): a mixin of DataGrid, so each table in
each pane has them with no pane edit.

- `s` (or `o`) sorts by the next column (each press moves one column right; after the last, the
  order the pane loaded), `S` (or `O`) reverses, a click on a header sorts by that column (again:
  reversed). A pane that binds one of these keys itself keeps it (Sessions `s`, Rules `s`, Curator
  `S`, Search `o`): the other key of the pair does it there. The sort survives the pane's refreshes
  (DataGrid.set_rows re-applies it) and is shown in the table's bottom border.
- `ctrl+e` exports what the table shows (after the pane's filter, in the shown order) to CSV or
  JSON through a small dialog (console/app/widgets/export_dialog.py; the file rules live in
  console/shared/table_export.py). The notice naming the file stays in the notice log (`ctrl+n`).

Why an export writes no audit row: it changes nothing in the database (the audit chain records
mutations; an operator's search or view writes nothing either), and a viewer on a read-only replica
must still be able to hand over what they see. The trail is the notice log, and a JSON export
carries its own provenance (verified identity, database, time, filter, sort). An export of the
audit or forget views is flagged as evidence in that notice; an export of a forget preview warns
first that the file holds text a forget will remove and cannot reach afterwards.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual._two_way_dict import TwoWayDict
from textual.binding import Binding
from textual.widgets import DataTable, Input
from textual.worker import get_current_worker

from console.shared.table_export import ExportExists, Format, TableView, render, resolve_target, write_export
from engine.errors import EngineError, cut_line

if TYPE_CHECKING:  # what the mixin is mixed into (DataGrid): a DataTable with these two

    class _Grid(DataTable[Any]):
        @property
        def selected_key(self) -> str | None: ...
        def select_key(self, key: str | int) -> bool: ...
else:
    _Grid = object

UP, DOWN = "▲", "▼"

# Each action has its own key, so a pane's own binding of that key can win (check_action).
TABLE_TOOL_BINDINGS = [
    Binding("s", "sort_next_s", "Sort by next column", show=False, id="table.sort"),
    Binding("o", "sort_next_o", "Sort (where a pane uses s)", show=False, id="table.sort_alt"),
    Binding("S", "sort_reverse_S", "Reverse the sort", show=False, id="table.sort_reverse"),
    Binding("O", "sort_reverse_O", "Reverse (where a pane uses S)", show=False, id="table.sort_reverse_alt"),
    Binding("ctrl+e", "export_view", "Export this view (CSV/JSON)", show=False, id="table.export"),
]
TOOL_KEYS = {"sort_next_s": "s", "sort_next_o": "o", "sort_reverse_S": "S", "sort_reverse_O": "O"}

# Tables whose export is evidence (the audit log, forget cases and a case's preview).
EVIDENCE_TABLES = frozenset({"audit", "cases", "forget-preview"})
# Tables holding text a forget is about to remove: their export is a copy forget cannot reach.
FORGETTABLE_TABLES = frozenset({"forget-preview"})


def _plain(value: Any) -> str:
    plain = getattr(value, "plain", None)
    return plain if isinstance(plain, str) else ("" if value is None else str(value))


_NUM = re.compile(r"^[+-]?\d[\d,]*(\.\d+)?%?$")
_PARTS = re.compile(r"(\d+)")
BLANKS = frozenset({"", "–", "-", "—", "·"})


def sort_key(value: Any, reverse: bool = False) -> tuple:
    """Numbers by value, text naturally ("m2" before "m10") and case-blind; blanks ("–") last in
    either direction."""
    s = _plain(value).strip()
    if s in BLANKS:
        return (-1 if reverse else 1, 0, 0.0, ())
    if _NUM.match(s):
        return (0, 0, float(s.replace(",", "").rstrip("%")), ())
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in _PARTS.split(s.casefold()) if p)
    return (0, 1, 0.0, parts)


class TableTools(_Grid):
    """Mixed into DataGrid (a DataTable): sort state, the sort/export actions, the header click."""

    sort_column: str | None = None  # the label sorted by (labels survive a pane re-adding columns)
    sort_reverse: bool = False
    _data_order: dict[str, int] | None = None  # row key -> position as the pane loaded it

    # -- keys a pane keeps ---------------------------------------------------------------------
    def tool_allowed(self, action: str) -> bool:
        """A sort key yields to a pane (or screen) that binds the same key itself."""
        key = TOOL_KEYS.get(action)
        if key is None:
            return True
        return not any(
            isinstance(b, Binding) and key in b.key.split(",")
            for node in self.ancestors_with_self[1:]
            for b in getattr(node, "BINDINGS", [])
        )

    # -- sorting -------------------------------------------------------------------------------
    def remember_data_order(self, keys: list[str]) -> None:
        self._data_order = {k: i for i, k in enumerate(keys)}

    def _labels(self) -> list[str]:
        return [c.label.plain for c in self.ordered_columns]

    def sort_by(self, label: str | None, reverse: bool = False) -> None:
        """Sort by the column labelled `label` (None: the pane's own order), keeping the cursor
        on the same row."""
        self.sort_column, self.sort_reverse = label, reverse
        self.apply_sort()
        self.border_subtitle = f"sorted by {label} {DOWN if reverse else UP}" if label is not None else ""

    def apply_sort(self, keep_cursor: bool = True) -> None:
        """(Re-)apply the operator's sort, the cursor staying on its row (set_rows calls this and
        places the cursor itself)."""
        if not self.row_count:
            return
        label = self.sort_column
        col = next((c for c in self.ordered_columns if c.label.plain == label), None)
        if label is not None and col is None:  # the pane's columns changed: back to its order
            self.sort_column, label = None, None
        key = self.selected_key
        with self.prevent(DataTable.RowHighlighted, DataTable.CellHighlighted):
            if col is not None:
                rev = self.sort_reverse
                self.sort(col.key, key=lambda v: sort_key(v, rev), reverse=rev)
            else:
                # The pane's own order: DataTable.sort gives its key no row key, so place the
                # rows as it does (Textual's row-location map).
                order = self._data_order or {}
                keys = sorted(self.rows, key=lambda rk: order.get(rk.value or "", len(order)))
                self._row_locations = TwoWayDict({rk: i for i, rk in enumerate(keys)})
                self._update_count += 1
                self.refresh()
            if key is not None and keep_cursor:
                self.select_key(key)

    def action_sort_next_s(self) -> None:
        self._sort_next()

    def action_sort_next_o(self) -> None:
        self._sort_next()

    def action_sort_reverse_S(self) -> None:  # noqa: N802
        self._sort_reverse()

    def action_sort_reverse_O(self) -> None:  # noqa: N802
        self._sort_reverse()

    def _sort_next(self) -> None:
        labels = self._labels()
        if not labels:
            return
        i = labels.index(self.sort_column) + 1 if self.sort_column in labels else 0
        nxt = labels[i] if i < len(labels) else None
        self.sort_by(nxt)
        self.notify(f"Sorted by {nxt} {UP}" if nxt is not None else "Back to the pane's own order", timeout=2)

    def _sort_reverse(self) -> None:
        labels = self._labels()
        if not labels:
            return
        label = self.sort_column if self.sort_column in labels else labels[0]
        reverse = not self.sort_reverse if self.sort_column in labels else True
        self.sort_by(label, reverse)
        self.notify(f"Sorted by {label} {DOWN if reverse else UP}", timeout=2)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a header: sort by that column; a second click reverses."""
        if event.data_table is not self:
            return
        event.stop()
        label = event.label.plain
        self.sort_by(label, reverse=self.sort_column == label and not self.sort_reverse)

    # -- export --------------------------------------------------------------------------------
    def table_view(self) -> TableView:
        """What this table shows, in the shown order (whole cells, not the width-cut ones)."""
        pane: Any = next((a for a in self.ancestors if getattr(a, "PANE_ID", "")), None)  # its pane
        rows = tuple(tuple(_plain(c) for c in self.get_row_at(i)) for i in range(self.row_count))
        meta: dict[str, str] = {"exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        app = self.app
        engine = getattr(app, "engine", None)
        if engine is not None:
            meta["exported_by"] = engine.actor  # the verified identity (and any label beside it)
            meta["database"] = str(getattr(app, "db_label", "") or "")
        if pane is not None:
            found = pane.query(pane.FILTER_SELECTOR)
            if found and isinstance(found.first(), Input):
                meta["filter"] = found.first(Input).value
        sort = f"{self.sort_column} {DOWN if self.sort_reverse else UP}" if self.sort_column else ""
        return TableView(
            pane=pane.TITLE if pane is not None else "",
            table=self.id or "table",
            title=_plain(self.border_title) or (self.id or "table"),
            columns=tuple(self._labels()),
            rows=rows,
            sort=sort,
            meta=meta,
        )

    def export_place(self) -> tuple[Path, Path | None]:
        """(where a relative name goes, the one folder a served console may write into)."""
        served = getattr(self.app, "served", None)
        if served is not None:  # a browser user writes on the server's disk: their folder only
            safe = re.sub(r"[^A-Za-z0-9._-]", "_", served.name) or "operator"
            folder = Path.home() / "memconsole-exports" / safe
            return folder, folder
        return Path.cwd(), None

    def protected_files(self) -> list[Path]:
        engine = getattr(self.app, "engine", None)
        try:
            db = Path(engine.path) if engine is not None else None
        except Exception:  # a server URL has no file
            db = None
        if db is None:
            return []
        return [db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal"))]

    def resolver(self):
        cwd, confine = self.export_place()
        protected = self.protected_files()

        def resolve(text: str, fmt: Format) -> Path:
            return resolve_target(text, fmt, cwd=cwd, confine_to=confine, protected=protected)

        return resolve

    def action_export_view(self) -> None:
        from .export_dialog import ExportChoice, ExportDialog

        if not self.columns:
            self.notify("Nothing to export: this table has no columns yet.", timeout=3)
            return
        view = self.table_view()
        cwd, confine = self.export_place()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        default = f"memconsole-{view.table}-{stamp}.csv"
        warning = None
        if view.table in FORGETTABLE_TABLES:
            warning = (
                "This preview holds the text the forget case removes: the file is a copy that the "
                "forget can neither reach nor verify. Keep it only where the case requires it."
            )

        def chosen(choice: ExportChoice | None) -> None:
            if choice is not None:
                self._write_export(view, choice)

        where = f"into {confine}" if confine is not None else f"relative to {cwd}"
        self.app.push_screen(
            ExportDialog(
                f"Export {view.title} · {len(view.rows)} rows",
                default,
                self.resolver(),
                where=where,
                warning=warning,
            ),
            chosen,
        )

    def _write_export(self, view: TableView, choice: Any) -> None:
        app = self.app
        evidence = view.table in EVIDENCE_TABLES

        def work() -> None:
            try:
                n = write_export(choice.path, render(view, choice.format), overwrite=choice.overwrite)
            except ExportExists as e:
                msg, sev = (
                    f"Not exported: {e.path} appeared meanwhile (export again to replace it).",
                    "warning",
                )
            except EngineError as e:
                msg, sev = f"Not exported: {cut_line(str(e))}", "error"
            else:
                what = "evidence export" if evidence else "export"
                warn = view.table in FORGETTABLE_TABLES
                msg = (
                    f"{what}: {len(view.rows)} rows of {view.title} ({view.pane}) to {choice.path} "
                    f"({choice.format}, {n} bytes{', replaced' if choice.overwrite else ''})"
                    + (" · holds text a forget removes" if warn else "")
                )
                sev = "warning" if warn else "information"
            if not get_current_worker().is_cancelled:
                app.call_from_thread(app.notify, msg, severity=sev, timeout=6)

        app.run_worker(work, thread=True, group="table-export", exit_on_error=False)
