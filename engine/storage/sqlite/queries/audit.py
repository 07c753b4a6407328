"""Audit read model in SQLite's SQL. The chain's position is `id`; the database's place is its
file (../audit.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engine.storage.queries.audit import AuditFilter, AuditQueries, like_literal
from engine.storage.sqlite import audit
from engine.storage.sqlite.gateways.columns import marks

_HEAD = "SELECT id, hash, at, actor, action, target_kind, target_id FROM audit ORDER BY id DESC LIMIT 1"


class SqliteAuditQueries(AuditQueries):
    position = audit.POSITION

    def last(self, part: int = 0) -> Any | None:
        # SQLite writes one chain (0); a log migrated from PostgreSQL may hold others, closed here
        return self.conn.execute(
            "SELECT * FROM audit WHERE part = ? ORDER BY id DESC LIMIT 1", (part,)
        ).fetchone()

    def partitions(self) -> list[int]:
        return [int(r[0]) for r in self.conn.execute("SELECT DISTINCT part FROM audit ORDER BY part")]

    def _several(self) -> bool:
        """The log holds chains besides 0: migrated from a partitioned PostgreSQL log (#24)."""
        return self.conn.execute("SELECT 1 FROM audit WHERE part <> 0 LIMIT 1").fetchone() is not None

    def heads(self) -> list[tuple[int, int, str]]:
        r = self.conn.execute("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").fetchone()
        return [] if r is None else [(0, int(r[0]), str(r[1]))]

    def heads_records(self) -> list[Any]:
        return self.conn.execute("SELECT * FROM audit WHERE action = 'audit-heads' ORDER BY id").fetchall()

    def head(self) -> Any | None:
        return self.conn.execute(_HEAD).fetchone()

    def row(self, row_id: int) -> Any | None:
        return self.conn.execute("SELECT * FROM audit WHERE id = ?", (row_id,)).fetchone()

    def rows_from(self, start: int = 0) -> list[Any]:
        return self.conn.execute("SELECT * FROM audit WHERE id >= ? ORDER BY id", (start,)).fetchall()

    def chain(self, part: int = 0) -> Iterable[Any]:
        if not self._several():
            return self.conn.execute("SELECT * FROM audit WHERE part = ? ORDER BY id", (part,))
        # Several chains: ids interleave, so each chain's position is its rank (PostgreSQL's `seq`,
        # which its heads records bind); a deleted row still breaks the next row's link.
        return self.conn.execute(
            "SELECT *, row_number() OVER (ORDER BY id) AS seq FROM audit WHERE part = ? ORDER BY id", (part,)
        )

    def chain_position(self, part: int = 0) -> str:
        return "seq" if self._several() else self.position

    def before(self, row_id: int, part: int = 0) -> tuple[int, str] | None:
        r = self.conn.execute(
            "SELECT id, hash FROM audit WHERE id < ? AND part = ? ORDER BY id DESC LIMIT 1", (row_id, part)
        ).fetchone()
        return None if r is None else (r[0], r[1])

    def count(self, *, after: int | None = None, through: int) -> int:
        if after is None:
            return int(
                self.conn.execute("SELECT count(*) FROM audit WHERE id <= ?", (through,)).fetchone()[0]
            )
        return int(
            self.conn.execute(
                "SELECT count(*) FROM audit WHERE id > ? AND id <= ?", (after, through)
            ).fetchone()[0]
        )

    def entries(self, f: AuditFilter) -> list[Any]:
        conds: list[str] = ["1=1"]
        params: list[Any] = []
        if f.target_kind:
            conds.append("target_kind = ?")
            params.append(f.target_kind)
        if f.target_id is not None:
            conds.append("target_id = ?")
            params.append(f.target_id)
        if f.actor:
            conds.append("actor = ?")
            params.append(f.actor)
        if f.action_prefix is not None:
            conds.append("action LIKE ? ESCAPE '\\'")  # ASCII case-insensitive, as SQLite's LIKE is
            params.append(like_literal(f.action_prefix) + "%")
        elif f.action:
            conds.append("action = ?")
            params.append(f.action)
        for word in f.words:
            conds.append("(lower(reason) LIKE ? ESCAPE '\\' OR lower(summary) LIKE ? ESCAPE '\\')")
            pattern = "%" + like_literal(word.lower()) + "%"
            params += [pattern, pattern]
        if f.since is not None:
            conds.append("at >= ?")
            params.append(float(f.since))
        if f.until is not None:
            conds.append("at < ?")
            params.append(float(f.until))
        order = "DESC" if f.newest_first else "ASC"
        return self.conn.execute(
            f"SELECT * FROM audit WHERE {' AND '.join(conds)} ORDER BY id {order} LIMIT ?",
            [*params, int(f.limit)],
        ).fetchall()

    def adders(self, target_kind: str, target_ids: Sequence[str]) -> list[tuple[str, str]]:
        ids = list(target_ids)
        if not ids:
            return []
        rows = self.conn.execute(
            f"SELECT target_id, actor FROM audit WHERE target_kind = ? AND action = 'add'"
            f" AND target_id IN ({marks(len(ids))}) ORDER BY id DESC",
            [target_kind, *ids],
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def texts_of(self, target_kind: str, target_ids: Sequence[str]) -> list[tuple[int, str, str]]:
        ids = [str(i) for i in target_ids]
        out: list[tuple[int, str, str]] = []
        for k in range(0, len(ids), 500):
            part = ids[k : k + 500]
            rows = self.conn.execute(
                "SELECT id, reason, summary FROM audit WHERE target_kind = ?"
                f" AND target_id IN ({marks(len(part))}) ORDER BY id",
                [target_kind, *part],
            ).fetchall()
            out += [(int(r[0]), str(r[1] or ""), str(r[2] or "")) for r in rows]
        return out

    def texts_after(self, after_id: int, limit: int) -> list[tuple[int, str, str]]:
        rows = self.conn.execute(
            "SELECT id, reason, summary FROM audit WHERE id > ? ORDER BY id LIMIT ?", (after_id, limit)
        ).fetchall()
        return [(int(r[0]), str(r[1] or ""), str(r[2] or "")) for r in rows]

    def meta_value(self, key: str) -> Any | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def database_path(self) -> str:
        return audit.database_path(self.conn)

    def database_place(self) -> tuple[str, str] | None:
        return audit.database_place(self.conn)
