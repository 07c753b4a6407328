"""A migration into an empty database, in bulk: every row of the source read from one snapshot and
written into the target in batches (executemany on SQLite, COPY on PostgreSQL: the store's `dump`,
engine/storage/dump.py) inside one write, instead of the JSONL export restored row by row
(engine/importers/jsonl_io.py), which costs a round trip or more per row.

An empty target gets what that restore would give it, record for record:
- every row is held to its table's schema (validate.check_row) and every vector to
  validate.vector before it is written; a refusal names the record as the export numbers it
  ("SOURCE's export, record N: ..."), and nothing is written;
- ids are kept and the target's sequences moved past them; a memory without a vector comes with
  embedded = 0 (backfill makes one); each restored vector is logged in vector_changes;
- a meta row the target already holds is kept as the target has it (skipped, counted);
- foreign keys are checked (per row on PostgreSQL, at the end on SQLite) and a dangling one named
  by its record;
- one audit row, the restore's own, as the JSONL restore writes it.
What only a target holding records can meet (tombstones, rows already there, a re-import into the
database the export came from) is why migrate.py sends only an empty target, with another
database id, here."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.errors import ImportFailed, InvalidInput, cut
from engine.importers import validate
from engine.importers.common import ImportSummary
from engine.importers.jsonl_io import TYPE_OF, audit_restore, only, tables
from engine.importers.migrate_model import adopt, tag_of
from engine.storage.dump import TableDump, VectorRow

if TYPE_CHECKING:
    from engine.storage.port import Connection

BATCH = 5000  # rows per executemany / COPY: memory stays bounded, a refusal is found quickly
EXPORT_NAME = "migrate.jsonl"  # what the restore's audit row names, as when it was a JSONL file
_KEPT = "differs from this database's; kept this database's"


@dataclass
class Copied:
    records: dict[str, int] = field(default_factory=dict)  # record type -> rows read from the source
    vectors: int = 0
    restored: ImportSummary = field(default_factory=lambda: ImportSummary(source=EXPORT_NAME, format="jsonl"))


def copy_all(source: Any, target: Any, label: str) -> Copied:
    """Copy every record of the `source` engine into the empty `target` engine in one write.
    `label` names the source in errors ("postgresql://u:***@h/db's export")."""
    store, tag = target.ctx.store, tag_of(source)
    with source.ctx.store.reading() as rconn:
        return store.write(
            lambda conn: _Restore(source.ctx.store.dump, rconn, store.dump, conn, label).run(target.ctx, tag)
        )


class _Restore:
    """One run of the copy inside the target's write (the write may run it again on a retry)."""

    def __init__(
        self, sdump: TableDump, rconn: Connection, dump: TableDump, conn: Connection, label: str
    ) -> None:
        self.sdump, self.rconn, self.dump, self.conn, self.label = sdump, rconn, dump, conn, label
        self.out = Copied()
        self.no = 1  # the export's line number of the current record (its header is line 1)
        self.lines: dict[tuple[str, int], int] = {}  # (table, id) -> record, for foreign-key errors

    def fail(self, no: int | None, message: str) -> ImportFailed:
        return ImportFailed(f"{self.label}, record {no}: {message}" if no else f"{self.label}: {message}")

    def run(self, ctx: Any, tag: Any) -> Copied:
        conn, dump = self.conn, self.dump
        live = {t: cols for t, cols, _ in tables(dump, conn)}
        for t in live:  # checked empty before: another writer may have been quicker since
            if t != "meta" and dump.any_row(conn, t):
                raise ImportFailed(
                    f"the target received {TYPE_OF.get(t, t)} records meanwhile; nothing was copied"
                )
        # The source's model and width, vectors kept as they are (migrate_model.py).
        self.dim = adopt(conn, ctx.vectors.backend, tag)
        declared = dict(dump.declared())
        self.vlog = dump.has_table(conn, "vector_changes")
        dump.defer_foreign_keys(conn)  # rows come parents first anyway
        for table, cols, _ in tables(self.sdump, self.rconn):
            rows = self.sdump.count(self.rconn, table)
            upkeep = dump.deferred_upkeep(conn, table, rows) if table in live else None
            self.table(table, cols, live.get(table), declared.get(table, {}))
            if upkeep is not None:
                upkeep()
        s = self.out.restored
        for table, key, parent in dump.foreign_key_violations(conn):
            raise self.fail(
                self.lines.get((table, key)),
                f"this {TYPE_OF.get(table, table)} refers to a missing {TYPE_OF.get(parent, parent)}",
            )
        audit_restore(conn, ctx, EXPORT_NAME, s)
        return self.out

    def table(self, table: str, cols: list[str], live: list[str] | None, declared: dict[str, str]) -> None:
        rtype = TYPE_OF.get(table, table)
        with_vectors = table == "memories"
        rows = (
            self.sdump.memories_with_vectors(self.rconn, cols)
            if with_vectors
            else self.sdump.rows(self.rconn, table, cols, leave_out=only(table))
        )
        have = self.dump.meta(self.conn) if table == "meta" else {}
        n = len(cols)
        unknown = [c for c in cols if live is not None and c not in live]
        batch: list[tuple[int, tuple]] = []
        vectors: dict[int, VectorRow] = {}  # record -> its vector
        added = 0
        for r in rows:
            self.no += 1
            self.out.records[rtype] = self.out.records.get(rtype, 0) + 1
            if live is None:
                raise self.fail(self.no, f"unknown record type {cut(rtype)}")
            if unknown:
                raise self.fail(
                    self.no,
                    f"{table} has no column(s) {', '.join(unknown)} (exported by a newer memconsole?)",
                )
            row = dict(zip(cols, r, strict=False))  # a vector, if any, is the one value past them
            vec = r[n] if with_vectors else None
            try:
                if vec is not None:
                    self.out.vectors += 1
                    vec = validate.vector(base64.b64encode(bytes(vec)).decode("ascii"), self.dim)
                validate.check_row(table, row, declared)
            except InvalidInput as exc:
                raise self.fail(self.no, str(exc)) from None
            if table == "meta" and row.get("key") in have:  # the live value is kept, as a restore keeps it
                same = have[row["key"]] == row.get("value")
                self.out.restored.skip(f"{rtype} already present" if same else f"{rtype} {_KEPT}")
                continue
            if with_vectors:
                if vec is None and "embedded" in row:
                    row["embedded"] = 0  # no vector in the source: backfill makes one
                elif vec is not None:
                    vectors[self.no] = (row["id"], vec, row["tier"], row["kind"], row["category"],
                                        row["agent"] or "", row["user"] or "")  # fmt: skip
            if isinstance(row.get("id"), int):
                self.lines[(table, row["id"])] = self.no
            batch.append((self.no, tuple(row[c] for c in cols)))
            if len(batch) >= BATCH:
                added += self.flush(table, rtype, cols, batch, vectors)
                batch, vectors = [], {}
        added += self.flush(table, rtype, cols, batch, vectors)
        if added and "id" in cols:
            self.dump.advance_ids(self.conn, table)
        self.out.restored.add(rtype, added)

    def flush(
        self,
        table: str,
        rtype: str,
        cols: list[str],
        batch: list[tuple[int, tuple]],
        vectors: dict[int, VectorRow],
    ) -> int:
        """Write one batch; a refused row is found again one by one and named by its record."""
        if not batch:
            return 0
        conn, dump = self.conn, self.dump
        dump.savepoint(conn)
        try:
            dump.insert_rows(conn, table, cols, [values for _, values in batch])
            if vectors:
                dump.restore_vectors(conn, list(vectors.values()), log=self.vlog)
        except dump.error as exc:
            if dump.disk_full(conn, exc):
                raise  # the store says "disk full" (nothing of this copy is kept)
            try:
                dump.rollback_savepoint(conn)
            except dump.error:  # the connection itself failed: no row to name
                raise self.fail(None, f"cannot restore the {rtype} records ({exc})") from None
            for no, values in batch:
                try:
                    dump.insert_rows(conn, table, cols, [values])
                    if no in vectors:
                        dump.restore_vectors(conn, [vectors[no]], log=self.vlog)
                except dump.error as exc:
                    if dump.disk_full(conn, exc):
                        raise
                    raise self.fail(no, f"cannot restore this {rtype} ({exc})") from None
        dump.release_savepoint(conn)
        return len(batch)
