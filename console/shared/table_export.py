"""Export of a table view (what a console table shows, after its filter and sort) to CSV or JSON.

UI-free (the console's `ctrl+e` dialog calls it; a CLI could): the target path is checked before
anything is written (one clear `InvalidInput` line per hostile path), a file is never overwritten
unless the caller says the operator agreed, and the exported text never carries a terminal
escape or bidi override from stored text (`visible`), nor a spreadsheet formula (CSV cells that a
spreadsheet would evaluate — `=`, `+`, `-`, `@`, tab, CR first — get a leading `'`, the OWASP
guard), so opening the file in a terminal or a spreadsheet runs nothing a memory held.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from console.shared.text_safety import json_safe, visible
from engine.errors import InvalidInput, cut

Format = Literal["csv", "json"]
FORMATS: tuple[Format, ...] = ("csv", "json")
MAX_PATH = 1024  # a longer "path" is a paste accident, not a file name


class ExportExists(InvalidInput):
    """The target file exists: the caller asks the operator before overwriting it."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} exists")
        self.path = path


@dataclass(frozen=True)
class TableView:
    """What the operator sees in one table: its column labels and its rows, in the shown order."""

    pane: str  # the pane's title ("Forget & Audit")
    table: str  # the table's id ("audit")
    title: str  # its border title ("audit log (12)")
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    sort: str = ""  # "tier ▲" when the operator sorted it
    meta: dict[str, str] = field(default_factory=dict)  # who / which database / when (JSON only)


def resolve_target(
    text: str,
    fmt: Format,
    *,
    cwd: Path,
    confine_to: Path | None = None,
    protected: Sequence[Path] = (),
) -> Path:
    """The absolute file `text` names, or InvalidInput saying in one line why not. A relative path
    is taken from `cwd`; without a suffix the format's is added. `confine_to` (a console served to a
    browser, writing on the server's disk): only a bare file name, written there. `protected`: files
    an export must never replace (the database and its WAL). Raises ExportExists when the file is
    there (the caller asks first)."""
    raw = text.strip()
    if not raw:
        raise InvalidInput("export: a file name is required")
    if len(raw) > MAX_PATH:
        raise InvalidInput(f"export: the path is longer than {MAX_PATH} characters")
    if re.search(r"[\x00-\x1f\x7f]", raw):
        raise InvalidInput(f"export: the path holds a control character: {cut(visible(raw, one_line=True))}")
    if confine_to is not None:
        if "/" in raw or "\\" in raw or raw in (".", "..") or raw.startswith("~"):
            raise InvalidInput(
                f"export: a served console writes only into {confine_to}: give a file name, not a path"
            )
        path = confine_to / raw
    else:
        path = Path(os.path.expanduser(raw))
        if not path.is_absolute():
            path = cwd / path
    if raw.endswith(("/", os.sep)) or path.is_dir():
        raise InvalidInput(f"export: {cut(visible(str(path)))} is a directory, not a file")
    if not path.suffix:
        path = path.with_name(f"{path.name}.{fmt}")
    parent = path.parent
    if confine_to is not None:
        parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not parent.is_dir():
        raise InvalidInput(f"export: the folder {cut(visible(str(parent)))} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidInput(f"export: the folder {cut(visible(str(parent)))} is not writable")
    path = parent.resolve() / path.name
    for p in protected:
        try:
            same = path.resolve() == p.resolve()
        except OSError:
            same = False
        if same:
            raise InvalidInput(f"export: {cut(visible(str(path)))} is the database's own file")
    if path.is_symlink() or path.exists():
        if path.exists() and not path.is_file():
            raise InvalidInput(f"export: {cut(visible(str(path)))} is not a regular file")
        raise ExportExists(path)
    return path


# A cell a spreadsheet would evaluate (CSV injection): prefixed with ' (a number stays a number).
_FORMULA = re.compile(r"^[=+\-@\t\r]")
_NUMBER = re.compile(r"^[+-]?(\d[\d,]*)?(\.\d+)?([eE][+-]?\d+)?%?$")


def _csv_cell(value: str) -> str:
    s = visible(value)
    if _FORMULA.match(s) and not _NUMBER.match(s):
        return "'" + s
    return s


def render(view: TableView, fmt: Format) -> str:
    """The file's text: CSV (a header row of column labels, then the rows) or JSON (meta + rows as
    objects keyed by label). Every cell passes `visible`; JSON also escapes DEL, C1 and bidi."""
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([_csv_cell(c) for c in view.columns])
        for row in view.rows:
            w.writerow([_csv_cell(c) for c in row])
        return buf.getvalue()
    if fmt == "json":
        cols = [visible(c) for c in view.columns]
        doc = {
            "pane": visible(view.pane),
            "table": visible(view.table),
            "title": visible(view.title),
            "sort": visible(view.sort),
            **{k: visible(v) for k, v in view.meta.items()},
            "columns": cols,
            "rows": [dict(zip(cols, (visible(c) for c in row), strict=False)) for row in view.rows],
        }
        return json_safe(json.dumps(doc, ensure_ascii=False, indent=2)) + "\n"
    raise InvalidInput(f"export: the format is csv or json, not {cut(str(fmt))}")


def write_export(path: Path, text: str, *, overwrite: bool = False) -> int:
    """Write `text` to `path` (mode 0600: an audit or forget export is evidence, not for all
    users); the bytes written. A new file is created exclusively, so a file that appeared since the
    check is never replaced silently (ExportExists); `overwrite` replaces it atomically."""
    data = text.encode("utf-8")
    try:
        if not overwrite:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(path, flags, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return len(data)
        fd, tmp = tempfile.mkstemp(prefix=".export-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return len(data)
    except FileExistsError:
        raise ExportExists(path) from None
    except OSError as e:  # permission, a full disk, a name too long: one line, never a traceback
        raise InvalidInput(f"export: cannot write {cut(visible(str(path)))}: {e.strerror or e}") from None
