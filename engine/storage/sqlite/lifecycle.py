"""SQLite's side of the decay pass (engine/storage/lifecycle.py): `INDEXED BY` the partial
archive_at index, `NOT INDEXED` for full rewrites, rebuilding that index from its definition in
`sqlite_master` around a bulk update, and bursts of tier changes done set-based.

A burst (many memories archived at once: the first pass after importing old data, or after a
pause) would otherwise pay two per-row triggers for each row (schema.py): vec0's metadata update
(~1 ms a row through the virtual table) and a change-log insert. Past BURST_FROM rows those two
triggers are dropped inside the pass's own transaction and their work is done in bulk — vec0's
filter fields rewritten per chunk (vec.py `set_filters`), the change log filled by one INSERT —
then recreated before the commit, so no other connection ever sees the file without them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.storage.lifecycle import DecayPath, Params
from engine.storage.sqlite.vec import SqliteVectorStore

ARCHIVE_INDEX = "memories_archive_at"
BURST_FROM = 2_000  # rows; below it the per-row triggers cost less than a schema change
# A burst touches table and index pages in archive_at order, i.e. all over the file: with the
# default 2 MB page cache each row re-reads its pages (60,000 rows: 1.6 s -> 0.6 s with this).
BURST_CACHE_KIB = 256 * 1024
VECTOR_TRIGGERS = ("memories_vec_meta", "memories_vlog_au")  # the per-row work a burst batches
_TABLE: dict[DecayPath, str] = {
    # Without ANALYZE statistics the planner prefers memories_tier and walks every active row.
    "archive_at": f"memories INDEXED BY {ARCHIVE_INDEX}",
    "scan": "memories NOT INDEXED",
    "planner": "memories",
}


class SqliteDecayAccess:
    def __init__(self, vectors: SqliteVectorStore | None = None) -> None:
        self.vectors = vectors or SqliteVectorStore()

    def count(self, conn: Any, path: DecayPath, where: str, params: Params) -> int:
        return int(conn.execute(f"SELECT count(*) FROM {_TABLE[path]} WHERE {where}", params).fetchone()[0])

    def update(self, conn: Any, path: DecayPath, assignments: str, where: str, params: Params) -> int:
        return int(conn.execute(f"UPDATE {_TABLE[path]} SET {assignments} WHERE {where}", params).rowcount)

    def update_ids(
        self, conn: Any, path: DecayPath, assignments: str, where: str, params: Params
    ) -> list[int]:
        sql = f"UPDATE {_TABLE[path]} SET {assignments} WHERE {where} RETURNING id"
        if self.count(conn, path, where, params) < BURST_FROM:
            return [int(r[0]) for r in conn.execute(sql, params)]
        with triggers_dropped(conn, VECTOR_TRIGGERS), cache_raised(conn, BURST_CACHE_KIB):
            rows = conn.execute(sql + ", tier, kind, category, agent, user, embedded", params).fetchall()
            self.follow(conn, rows)
        return [int(r[0]) for r in rows]

    def follow(self, conn: Any, rows: list[Any]) -> None:
        """What the vector triggers would have done for each updated row (id, tier, kind,
        category, agent, user, embedded), set-based: vec0's filter fields of the embedded ones
        set from the row, and every id logged as changed (a reader of the log re-reads a logged
        memory, so logging one whose fields did not change is safe)."""
        if not rows:
            return
        self.vectors.set_filters(conn, [r for r in rows if r[6]])
        ids = [r[0] for r in rows]  # integers already (RETURNING id)
        ids.sort()
        conn.execute(
            "INSERT INTO vector_changes(memory_id) SELECT value FROM json_each(?)", (json.dumps(ids),)
        )

    @contextmanager
    def archive_index_dropped(self, conn: Any) -> Iterator[bool]:
        row = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (ARCHIVE_INDEX,)
        ).fetchone()
        if row is None:
            yield False
            return
        conn.execute(f"DROP INDEX {ARCHIVE_INDEX}")
        yield True
        conn.execute(row[0])


@contextmanager
def triggers_dropped(conn: Any, names: tuple[str, ...]) -> Iterator[None]:
    """Inside the caller's transaction: `names` dropped for the block and recreated from their
    definitions after it (an error rolls the whole transaction back, drops included)."""
    defs = [
        r[0]
        for r in conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN "
            f"({', '.join('?' for _ in names)})",
            names,
        )
    ]
    for name in names:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    yield
    for sql in defs:
        conn.execute(sql)


@contextmanager
def cache_raised(conn: Any, kib: int) -> Iterator[None]:
    """This connection's page cache at least `kib` for the block, then back to what it was."""
    before = int(conn.execute("PRAGMA cache_size").fetchone()[0])
    size = before if before < 0 else -before * 4  # pages -> KiB (negative), assuming 4 KiB pages
    if -size >= kib:
        yield
        return
    conn.execute(f"PRAGMA cache_size = {-int(kib)}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {before}")
