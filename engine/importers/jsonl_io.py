"""The full-fidelity JSONL format: every table of the schema, row for row, with vectors.

Line 1 is a header (`{"type": "header", "format": "memconsole-jsonl", ...}`); every other line is
`{"type": <record type>, "row": {column: value}}`, plus `"vector"` (base64 float32) on a memory
whose vector was exported. Column lists come from the live tables (the store's `dump`,
engine/storage/dump.py), so the format follows the schema as it grows. Rows keep their ids, so
links between them (messages to sessions, runs to flows, tombstones to requests, audit hashes)
survive; importing a row whose id is already taken by an identical row skips it, by a different
row fails. ``ingest`` is the simple
hand-written format; this one is for moving a whole database. This module reads and restores a
file; jsonl_format holds the format's constants, jsonl_export writes one.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from engine.audit import log as audit
from engine.embedding import tag as model_tag
from engine.embedding.tag import ModelTag
from engine.errors import ImportFailed, InvalidInput, cut
from engine.importers import validate
from engine.importers.common import ImportSummary, Progress, tick
from engine.importers.ingest import json_lines
from engine.importers.jsonl_export import check_target, export_file, export_records
from engine.importers.jsonl_format import (
    BLOB,
    FORMAT,
    IDENTITY_META,
    KEEP_LIVE,
    TYPE_OF,
    VERSION,
    dec,
    only,
    tables,
)
from engine.importers.jsonl_guard import Guard, database_id, export_database_id
from engine.storage.dump import TableDump

if TYPE_CHECKING:
    from engine.context import Context
    from engine.importers.service import Importers
    from engine.storage.port import Connection

# Used from here by the importers' service, migrate, the CLI and tests.
__all__ = [
    "FORMAT",
    "TYPE_OF",
    "VERSION",
    "audit_restore",
    "check_target",
    "export_file",
    "export_records",
    "import_file",
    "only",
    "read_file",
    "tables",
]


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
            row = {c: dec(v) for c, v in row.items()}
            validate.check_row(table, row, declared.get(table, {}))
        except InvalidInput as exc:
            raise ImportFailed(f"{where}: {exc}") from None
        except (ValueError, TypeError):
            raise ImportFailed(f'{where}: a "{BLOB}" value is not base64') from None
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
            if table in KEEP_LIVE or keep_live:  # the live row is newer than its export
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
