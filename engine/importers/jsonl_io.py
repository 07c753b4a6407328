"""The full-fidelity JSONL format: every table of the schema, row for row, with vectors.

Line 1 is a header (`{"type": "header", "format": "memconsole-jsonl", ...}`); every other line is
`{"type": <record type>, "row": {column: value}}`, plus `"vector"` (base64 float32) on a memory
whose vector was exported. Column lists come from the live tables (the store's `dump`,
engine/storage/dump.py), so the format follows the schema as it grows. Rows keep their ids, so
links between them (messages to sessions, runs to flows, tombstones to requests, audit hashes)
survive; importing a row whose id is already taken by an identical row skips it, by a different
row fails. ``ingest`` is the simple
hand-written format; this one is for moving a whole database.
"""

from __future__ import annotations

import base64
import contextlib
import glob
import json
import os
import stat
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import tempfiles
from engine.audit import log as audit
from engine.embedding import tag as model_tag
from engine.embedding.tag import ModelTag
from engine.errors import EngineError, ImportFailed, InvalidInput, cut
from engine.importers import validate
from engine.importers.common import ExportSummary, ImportSummary, Progress, tick
from engine.importers.files import database_files
from engine.importers.ingest import json_lines
from engine.importers.jsonl_guard import Guard, database_id, export_database_id
from engine.paths import home_of, private_dir
from engine.storage.dump import TableDump

if TYPE_CHECKING:
    from engine.context import Context
    from engine.importers.service import Importers
    from engine.storage.port import Connection

FORMAT = "memconsole-jsonl"
VERSION = 1
# Record type for each table (a table added later is exported under its own name).
TYPE_OF = {
    "meta": "meta",
    "sessions": "session",
    "messages": "message",
    "memories": "memory",
    "rules": "rule",
    "rule_history": "rule_history",
    "flows": "flow",
    "flow_runs": "flow_run",
    "proposals": "proposal",
    "curator_runs": "curator_run",
    "audit": "audit",
    "forget_requests": "forget_request",
    "tombstones": "tombstone",
    "import_watermarks": "import_watermark",
}
_BLOB = "$b64"
# Engine bookkeeping: a live value that differs is kept, not a conflict.
_KEEP_LIVE = ("meta",)
# Meta rows that name the file itself, never exported nor restored (pg_schema: the hash of a
# PostgreSQL database's own schema statements).
IDENTITY_META = ("app", "generation", "database_id", "pg_schema")
# Derived logs (like the FTS and vec0 tables): rebuilt by the engine, never exported.
DERIVED = {"vector_changes"}


def tables(dump: TableDump, conn: Connection) -> list[tuple[str, list[str], list[str]]]:
    """(table, columns, primary-key columns) for every schema table present, parents first."""
    return dump.tables(conn, [name for name, _ in dump.declared() if name not in DERIVED])


def _enc(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {_BLOB: base64.b64encode(bytes(v)).decode("ascii")}
    return v


def _dec(v):
    if isinstance(v, dict) and set(v) == {_BLOB}:
        return base64.b64decode(v[_BLOB])
    return v


def only(table: str) -> tuple[str, ...]:
    """The keys of the rows of `table` left out: the file's own identity (meta
    app/generation/database_id) is no record to move: the header carries the exporting database's
    id, and the restoring database keeps its own. Nor is the model tag (the header names the
    exporting store's model; the restoring store keeps its own, engine/embedding/tag.py)."""
    return (*IDENTITY_META, *model_tag.KEYS) if table == "meta" else ()


def _dumps(rec: dict) -> str:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":"))


def export_records(imp: Importers, *, vectors: bool = True) -> Iterator[dict[str, Any]]:
    """Yield every record (the header first), all read from one snapshot of the file."""
    dump = imp.ctx.store.dump
    with imp.ctx.store.reading() as conn:
        tabs = tables(dump, conn)
        counts = {TYPE_OF.get(t, t): dump.count(conn, t, leave_out=only(t)) for t, _, _ in tabs}
        yield {
            "type": "header",
            "format": FORMAT,
            "version": VERSION,
            "generation": dump.generation,
            "exported_at": imp.ctx.clock.now(),
            "records": counts,
            "vectors": bool(vectors),
            "database_id": database_id(conn),
            # which model made the vectors (issue #26): an import into a store of another model
            # drops them (those memories are embedded again there)
            "vector_model": model_tag.read(conn).model,
        }
        for t, cols, _ in tabs:
            rtype = TYPE_OF.get(t, t)
            with_vectors = t == "memories" and vectors
            rows = (
                dump.memories_with_vectors(conn, cols)
                if with_vectors
                else dump.rows(conn, t, cols, leave_out=only(t))
            )
            for r in rows:
                rec = {"type": rtype, "row": {c: _enc(r[i]) for i, c in enumerate(cols)}}
                if with_vectors and r[len(cols)] is not None:
                    rec["vector"] = base64.b64encode(bytes(r[len(cols)])).decode("ascii")
                yield rec


def export_file(
    imp: Importers,
    path: str | Path,
    *,
    vectors: bool = True,
    overwrite: bool = True,
    progress: Progress | None = None,
) -> ExportSummary:
    """Write the export atomically (a new temp file, then rename), private to the owner (0600).
    Only a regular file is ever replaced (and only with `overwrite`): never a symlink (its target
    would stay, the link would go), a device, a FIFO, or the database's own files."""
    path = Path(path)
    check_target(path, overwrite, database=imp.ctx.path)
    with contextlib.ExitStack() as stack:
        tmp = _temp_name(stack, home_of(imp.ctx.path), path)
        return _write_export(imp, path, tmp, vectors, overwrite, progress)
    raise AssertionError("unreachable")  # pragma: no cover - mypy: the with always returns


def _temp_name(stack: contextlib.ExitStack, home: Path, path: Path) -> Path:
    """Where the export is written before its rename: inside a private folder of the database's
    home (engine/tempfiles.py: removed on every exit, swept at next start, scanned by a forget)
    when that is on the target's filesystem; else beside the target, as `.<name>.tmp-<pid>`, whose
    leftovers of dead processes the next export to the same place removes."""
    with contextlib.suppress(OSError, EngineError):
        private_dir(home / tempfiles.FOLDER)
        if os.stat(home / tempfiles.FOLDER).st_dev == os.stat(path.parent).st_dev:
            return stack.enter_context(tempfiles.private_folder(home)) / path.name
    for old in path.parent.glob(f".{glob.escape(path.name)}.tmp-*"):
        pid = old.name.rpartition("-")[2]
        if pid.isdigit() and not tempfiles.alive(int(pid)) and old.is_file() and not old.is_symlink():
            old.unlink(missing_ok=True)
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def _write_export(
    imp: Importers, path: Path, tmp: Path, vectors: bool, overwrite: bool, progress: Progress | None
) -> ExportSummary:
    counts: dict[str, int] = {}
    nvec = 0
    try:
        # O_EXCL|O_NOFOLLOW: never through a planted symlink or into someone else's file.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot write ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o600)  # whatever the umask
            step = tick(None, 0)
            for rec in export_records(imp, vectors=vectors):
                if rec["type"] == "header":
                    step = tick(progress, sum(rec["records"].values()))
                else:
                    counts[rec["type"]] = counts.get(rec["type"], 0) + 1
                    nvec += "vector" in rec
                    step(1)
                f.write(_dumps(rec) + "\n")
        check_target(path, overwrite, database=imp.ctx.path)  # nothing swapped in meanwhile
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return ExportSummary(str(path), counts, nvec, os.stat(path).st_size)


def check_target(path: Path, overwrite: bool, *, database: Path | None = None) -> None:
    """Refuse to replace anything but a regular file, a regular file unless `overwrite`, and ever
    the live `database` or its -wal/-shm (by name, or by inode for another link to one)."""
    if database is not None and _is_database_file(path, database):
        raise InvalidInput(f"{path} is the memory database's own file; export writes elsewhere")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot write ({exc.strerror})") from None
    if database is not None and (st.st_dev, st.st_ino) in database_files(database):
        raise InvalidInput(f"{path} is the memory database's own file; export writes elsewhere")
    if stat.S_ISLNK(st.st_mode):
        raise InvalidInput(f"{path} is a symlink; export writes only to a regular file (give the real path)")
    if not stat.S_ISREG(st.st_mode):
        raise InvalidInput(f"{path} is {_kind_of(st.st_mode)}; export replaces only a regular file")
    if not overwrite:
        raise InvalidInput(f"{path} exists; use --force to overwrite it")


def _is_database_file(path: Path, database: Path) -> bool:
    """`path` names the database or its -wal/-shm (folders resolved: another spelling counts)."""
    try:
        where = path.absolute().parent.resolve() / path.name
        db = database.absolute().parent.resolve() / database.name
    except (OSError, RuntimeError):
        return False
    return where in {db.with_name(db.name + suffix) for suffix in ("", "-wal", "-shm")}


def _kind_of(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


# -- import --------------------------------------------------------------------------------------
def read_file(
    path: Path,
    live: dict[str, tuple[list[str], list[str]]],
    dump: TableDump,
    *,
    avoid: Collection[tuple[int, int]] = frozenset(),
    store_model: ModelTag | None = None,
) -> tuple[dict, list[tuple[int, str, dict, bytes | None]]]:
    """Validate the whole file before anything is written: (header, [(line, table, row, vector)]).
    Every row is held to its table's schema (validate.check_row): a malformed row stored now
    would make forget, proposals or the curator fail later."""
    by_type = {TYPE_OF.get(t, t): t for t in live} | {t: t for t in live}
    declared = dict(dump.declared())
    out = []
    header: dict = {}
    seen_header = False
    for no, where, rec in json_lines(path, avoid=avoid):
        if not seen_header:
            if rec.get("type") != "header" or rec.get("format") != FORMAT:
                raise ImportFailed(
                    f"{where}: not a memconsole export (the first line must be "
                    f"its header); for hand-written files use `ingest`"
                )
            if not isinstance(rec.get("version"), int) or rec["version"] > VERSION:
                raise ImportFailed(
                    f"{where}: export format version {cut(rec.get('version'))} "
                    f"is newer than this memconsole reads ({VERSION})"
                )
            seen_header = True
            header = rec
            continue
        table = by_type.get(str(rec.get("type")))
        if table is None:
            raise ImportFailed(f"{where}: unknown record type {cut(rec.get('type'))}")
        row = rec.get("row")
        if not isinstance(row, dict) or not row:
            raise ImportFailed(f'{where}: a {rec["type"]} record needs a "row" object')
        unknown = [c for c in row if c not in live[table][0]]
        if unknown:
            raise ImportFailed(
                f"{where}: {table} has no column(s) {', '.join(unknown)} (exported by a newer memconsole?)"
            )
        vec = rec.get("vector")
        try:
            if vec is not None:
                if table != "memories":
                    raise InvalidInput("a vector must belong to a memory")
                tag = store_model or model_tag.LEGACY
                if header.get("vector_model", model_tag.LEGACY.model) != tag.model:
                    vec = None  # another model's vector: embedded again by this store's model
                else:
                    vec = validate.vector(vec, tag.dim)
            row = {c: _dec(v) for c, v in row.items()}
            validate.check_row(table, row, declared.get(table, {}))
        except InvalidInput as exc:
            raise ImportFailed(f"{where}: {exc}") from None
        except (ValueError, TypeError):
            raise ImportFailed(f'{where}: a "{_BLOB}" value is not base64') from None
        out.append((no, table, row, vec))
    if not seen_header:
        raise ImportFailed(f"{path}: empty file (no memconsole export header)")
    return header, out


def import_file(
    imp: Importers, path: str | Path, *, dry_run: bool = False, progress: Progress | None = None
) -> ImportSummary:
    ctx, dump = imp.ctx, imp.ctx.store.dump
    path = Path(path)
    with ctx.store.reading() as conn:
        live = {t: (cols, pk) for t, cols, pk in tables(dump, conn)}
        vlog = dump.has_table(conn, "vector_changes")
        here = database_id(conn)
    header, records = read_file(
        path, live, dump, avoid=imp.own_files(), store_model=ctx.vectors.tag(fresh=True)
    )
    same_db = here is not None and export_database_id(header, records) == here
    step = tick(progress, len(records))

    def write(conn: Connection) -> ImportSummary:
        s = ImportSummary(source=str(path), format="jsonl", dry_run=dry_run)
        dump.defer_foreign_keys(conn)  # rows arrive parents first anyway
        lines: dict[tuple[str, int], int] = {}  # (table, row key) -> line, for FK errors
        guard = Guard(conn, same_db, dump)
        for no, table, row, vec in records:
            step(1)
            rtype = TYPE_OF.get(table, table)
            _, pk = live[table]
            if table == "meta" and row.get("key") in IDENTITY_META:
                continue  # an older export's identity rows: this database keeps its own
            why = guard.reason(table, row)
            if why is not None:
                s.skip(f"{rtype} {why}")
                continue
            row = guard.clean(table, row)
            try:
                how = _restore(dump, conn, table, pk, row, vec, vlog, keep_live=same_db)
                if isinstance(how, int) and table == "sessions":
                    guard.fresh.add(str(row.get("id")))
                if isinstance(how, int):
                    lines[(table, how)] = no
                    how = "added"
            except ImportFailed as exc:
                raise ImportFailed(f"{path}:{no}: {exc}") from None
            except dump.error as exc:
                if dump.disk_full(conn, exc):
                    raise  # the store says "disk full" (nothing of this restore is kept)
                raise ImportFailed(f"{path}:{no}: cannot restore this {rtype} ({exc})") from None
            if how == "added":
                s.add(rtype)
            elif how == "kept":
                s.skip(f"{rtype} differs from this database's; kept this database's")
            else:
                s.skip(f"{rtype} already present")
        for table, key, parent in dump.foreign_key_violations(conn):
            line = lines.get((table, key))
            where = f"{path}:{line}" if line else str(path)
            raise ImportFailed(
                f"{where}: this {TYPE_OF.get(table, table)} refers to a missing {TYPE_OF.get(parent, parent)}"
            )
        audit_restore(conn, ctx, path.name, s)
        return s

    return ctx.store.dry_run(write) if dry_run else ctx.store.write(write)


def _restore(
    dump: TableDump,
    conn: Connection,
    table: str,
    pk: list[str],
    row: dict,
    vec: bytes | None,
    vlog: bool,
    keep_live: bool = False,
) -> str | int:
    """ "same" | "kept" for a row already there, else the new row's key (as foreign-key checks
    name it)."""
    if pk and all(k in row for k in pk):
        have = dump.row(conn, table, pk, [row[k] for k in pk])
        if have is not None:
            # `embedded` only says whether a vector exists yet: not part of a row's identity.
            if all(have[c] == v for c, v in row.items() if c != "embedded"):
                return "same"
            if table in _KEEP_LIVE or keep_live:  # the live row is newer than its export
                return "kept"
            ident = ", ".join(str(row[k]) for k in pk)
            raise ImportFailed(
                f"{TYPE_OF.get(table, table)} {ident} already exists with different "
                f"content (import into an empty database)"
            )
    if table == "memories" and vec is None:
        row = {**row, "embedded": 0}  # no vector in the file: backfill makes one
    key = dump.insert(conn, table, row)
    if vec is not None:
        dump.restore_vector(conn, conn.memories.row(row["id"]), vec, log=vlog)
    return key


def audit_restore(conn: Connection, ctx: Context, name: str, s: ImportSummary) -> None:
    """The restore's own audit row (the same for the row-by-row restore and migrate's bulk copy)."""
    audit.append(
        conn,
        at=ctx.clock.now(),
        actor=ctx.actor,
        action="import",
        target_kind="jsonl",
        target_id=name,
        summary={"added": s.added, "skipped": s.skipped},
    )
