"""PostgreSQL's side of the decay pass (engine/storage/lifecycle.py): the access path needs no
hint, PostgreSQL's planner chooses well on its own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.storage.lifecycle import DecayPath, Params


class PgDecayAccess:
    def count(self, conn: Any, path: DecayPath, where: str, params: Params) -> int:
        return int(conn.execute(f"SELECT count(*) FROM memories WHERE {where}", params).fetchone()[0])

    def update(self, conn: Any, path: DecayPath, assignments: str, where: str, params: Params) -> int:
        return int(conn.execute(f"UPDATE memories SET {assignments} WHERE {where}", params).rowcount)

    def update_ids(
        self, conn: Any, path: DecayPath, assignments: str, where: str, params: Params
    ) -> list[int]:
        sql = f"UPDATE memories SET {assignments} WHERE {where} RETURNING id"
        return [int(r[0]) for r in conn.execute(sql, params)]

    @contextmanager
    def archive_index_dropped(self, conn: Any) -> Iterator[bool]:
        yield False  # one UPDATE maintains PostgreSQL's index well enough
