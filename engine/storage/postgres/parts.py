"""The parts of the port this slice implements simply (the decay pass's access path: PostgreSQL's
planner needs no hint) and those it does not implement yet, which refuse with a clear EngineError
instead of a traceback or a silently wrong answer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.storage.lifecycle import DecayPath, Params
from engine.storage.postgres.connection import unsupported


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


class NotYet:
    """A part of the port not built on PostgreSQL yet: every use says so."""

    errors: tuple[type[BaseException], ...] = ()
    dimensions = 384
    generation = 0
    embed_dim = 384
    error: type[Exception] = Exception

    def __init__(self, what: str) -> None:
        self._what = what

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise unsupported(f"{self._what} ({name})")

        return refuse
