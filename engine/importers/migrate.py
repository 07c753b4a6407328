"""Moving a whole memory database between backends: `migrate(source, target)`, SQLite file or
PostgreSQL URL on either side.

It is the JSONL export of the source restored into the target (engine/importers/jsonl_io.py):
every table row for row with ids kept, vectors included, the forget tombstones with them, so the
target exports exactly what the source did plus the restore's own audit row. Into an empty
target (the usual case) the rows go straight from the source's snapshot to the target in bulk
(engine/importers/migrate_bulk.py: the same checks, the same result, COPY / executemany instead of
a statement per row). Into a target that holds records (`force`) or that has the source's own
database id, the export goes through a private temporary file (0600 in a 0700 folder of the
target's home, removed on every exit and, after a kill -9, at the next start: engine/tempfiles.py)
and is restored row by row, with the restore's handling of rows already there.

Both sides are checked before anything is opened: a source must exist (a path is never created
as a side effect), a target file's folder must exist, source and target must differ, and a target
that already holds records is refused unless `force` (then the restore adds to it, and refuses
rows that collide with different content).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from engine import tempfiles
from engine.errors import ImportFailed, InvalidInput, cut
from engine.importers import migrate_bulk, migrate_model
from engine.paths import home_of, server_url


@dataclass
class MigrateResult:
    source: str  # as shown (a server URL without its password)
    target: str
    records: dict[str, int] = field(default_factory=dict)  # record type -> rows exported
    vectors: int = 0
    added: dict[str, int] = field(default_factory=dict)  # record type -> rows restored
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> rows not restored


def _shown(place: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    url = server_url(place)
    if url is None:
        return place
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def _place(text: object, role: str, *, must_exist: bool) -> str:
    """A checked URL or absolute file path; one clear InvalidInput line otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"migrate needs a {role} (a database file or a postgresql:// URL)")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise InvalidInput(f"the {role} contains control characters; give a plain path or URL")
    url = server_url(text)
    if url is not None:
        if not text.lower().startswith(("postgresql://", "postgres://")):
            raise InvalidInput(f"the {role} {cut(text)} is neither a file path nor a postgresql:// URL")
        return url
    if "://" in text:
        raise InvalidInput(f"the {role} {cut(text)}: only postgresql:// URLs and file paths are supported")
    path = Path(text).expanduser().absolute()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if must_exist:
            raise InvalidInput(f"the {role} {path} does not exist") from None
        if not path.parent.is_dir():
            raise InvalidInput(f"the {role}'s folder {path.parent} does not exist") from None
        return str(path)
    except OSError as exc:
        raise InvalidInput(f"the {role} {path}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InvalidInput(f"the {role} {path} is not a regular file")
    return str(path.resolve())


def _records(eng) -> int:
    """Rows in the database beyond its own identity (meta): what makes a target not empty."""
    from engine.importers.jsonl_io import tables

    store = eng.ctx.store
    with store.reading() as conn:
        return sum(store.dump.count(conn, t) for t, _, _ in tables(store.dump, conn) if t != "meta")


def _same_database(a, b) -> bool:
    """The target is the source's copy (same database id): a re-import, which the row-by-row
    restore handles (rows deleted since are not re-created)."""
    from engine.importers.jsonl_guard import database_id

    with a.ctx.store.reading() as ca, b.ctx.store.reading() as cb:
        here = database_id(cb)
        return here is not None and database_id(ca) == here


def migrate(source: str, target: str, *, force: bool = False, actor: str | None = None) -> MigrateResult:
    """Copy every record of `source` into `target` (see the module docstring)."""
    from engine.engine import open_engine

    src = _place(source, "source", must_exist=True)
    dst = _place(target, "target", must_exist=False)
    if src == dst:
        raise InvalidInput("the source and the target are the same database")
    out = MigrateResult(_shown(src), _shown(dst))
    opts = {"embedder": None, "load": "lazy", "auto_backfill": False, "actor": actor}
    with open_engine(src, **opts) as a, open_engine(dst, **opts) as b:
        if a.ctx.store.dump.generation != b.ctx.store.dump.generation:
            raise InvalidInput("the source and the target have different schema generations")
        held = _records(b)
        if held and not force:
            raise InvalidInput(
                f"the target {out.target} already holds {held} records; migrate fills an empty "
                "database (--force adds to it)"
            )
        if held:  # a target of its own model keeps it: a source of another is refused
            migrate_model.refuse_mismatch(migrate_model.tag_of(a), migrate_model.tag_of(b), out.target)
        if not held and not _same_database(a, b):
            copied = migrate_bulk.copy_all(a, b, f"{out.source}'s export")
            out.records, out.vectors = copied.records, copied.vectors
            out.added, out.skipped = copied.restored.added, copied.restored.skipped
            return out
        # In the target's home (the text lands there): removed on every exit, swept at the next
        # start after a kill -9, and scanned by a forget meanwhile (engine/tempfiles.py).
        with tempfiles.private_folder(home_of(b.ctx.path)) as folder:
            file = folder / migrate_bulk.EXPORT_NAME
            try:
                exported = a.importers.export_jsonl(file)
                restored = b.importers.jsonl(file)
            except ImportFailed as exc:  # name the source, not a temporary file that is gone
                raise ImportFailed(str(exc).replace(f"{file}:", f"{out.source}'s export, record ")) from None
    out.records, out.vectors = exported.records, exported.vectors
    out.added, out.skipped = restored.added, restored.skipped
    return out
