"""SQLite's side of the decay pass (engine/storage/lifecycle_port.py): `INDEXED BY` the partial
archive_at index, `NOT INDEXED` for full rewrites, and rebuilding that index from its definition
in `sqlite_master` around a bulk update."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.storage.lifecycle import DecayPath, Params

ARCHIVE_INDEX = "memories_archive_at"
_TABLE: dict[DecayPath, str] = {
    # Without ANALYZE statistics the planner prefers memories_tier and walks every active row.
    "archive_at": f"memories INDEXED BY {ARCHIVE_INDEX}",
    "scan": "memories NOT INDEXED",
    "planner": "memories",
}


class SqliteDecayAccess:
    def count(self, conn: Any, path: DecayPath, where: str, params: Params) -> int:
        return int(conn.execute(f"SELECT count(*) FROM {_TABLE[path]} WHERE {where}", params).fetchone()[0])

    def update(self, conn: Any, path: DecayPath, assignments: str, where: str, params: Params) -> int:
        return int(conn.execute(f"UPDATE {_TABLE[path]} SET {assignments} WHERE {where}", params).rowcount)

    def update_ids(
        self, conn: Any, path: DecayPath, assignments: str, where: str, params: Params
    ) -> list[int]:
        sql = f"UPDATE {_TABLE[path]} SET {assignments} WHERE {where} RETURNING id"
        return [int(r[0]) for r in conn.execute(sql, params)]

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
