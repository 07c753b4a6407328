"""Audit read model in PostgreSQL's SQL. The chain's position is `seq` (assigned inside the
writing transaction: ids may have gaps, positions never do); a server database has no file, its
place and instance are in ../audit.py."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engine.storage.postgres import audit
from engine.storage.queries.audit import AuditFilter, AuditQueries, like_literal

_HEAD = "SELECT id, hash, at, actor, action, target_kind, target_id FROM audit ORDER BY id DESC LIMIT 1"

_PARTS = (
    "WITH RECURSIVE p(part) AS (SELECT min(part) FROM audit UNION ALL"
    " SELECT (SELECT min(part) FROM audit WHERE part > p.part) FROM p WHERE p.part IS NOT NULL)"
)
_PARTITION_HEADS = (
    "WITH RECURSIVE p(part) AS (SELECT min(part) FROM audit UNION ALL"
    " SELECT (SELECT min(part) FROM audit WHERE part > p.part) FROM p WHERE p.part IS NOT NULL)"
    " SELECT true AS is_head, a.* FROM p CROSS JOIN LATERAL"
    " (SELECT * FROM audit WHERE audit.part = p.part ORDER BY seq DESC LIMIT 1) a"
    " UNION ALL SELECT false, a.* FROM unnest(%s::bigint[], %s::bigint[]) AS k(part, s)"
    " JOIN audit a ON a.part = k.part AND a.seq = k.s"
)


class PgAuditQueries(AuditQueries):
    position = audit.POSITION

    def last(self, part: int = 0) -> Any | None:
        return self.conn.execute(
            "SELECT * FROM audit WHERE part = %s ORDER BY seq DESC LIMIT 1", (part,)
        ).fetchone()

    def partitions(self) -> list[int]:
        # A loose index scan over audit_part_seq: one probe per partition, not a read of the log.
        rows = self.conn.execute(f"{_PARTS} SELECT part FROM p WHERE part IS NOT NULL").fetchall()
        return [int(r[0]) for r in rows]

    def heads(self) -> list[tuple[int, int, str]]:
        # the partitions and each one's newest row in one statement (was two: a heads record's)
        rows = self.conn.execute(
            f"{_PARTS} SELECT a.part, a.seq, a.hash FROM p CROSS JOIN LATERAL"
            " (SELECT part, seq, hash FROM audit WHERE audit.part = p.part ORDER BY seq DESC LIMIT 1) a"
            " ORDER BY a.part"
        ).fetchall()
        return [(int(r[0]), int(r[1]), str(r[2])) for r in rows]

    def partition_heads(self, at: Sequence[tuple[int, int]] = ()) -> tuple[list[Any], list[Any]]:
        # One statement (it runs after every audited write): a loose index scan for the partitions,
        # each one's newest row, and the rows at the anchored positions, told apart by `is_head`.
        rows = self.conn.execute(_PARTITION_HEADS, ([p for p, _ in at], [s for _, s in at])).fetchall()
        return [r for r in rows if r["is_head"]], [r for r in rows if not r["is_head"]]

    def heads_records(self) -> list[Any]:
        return self.conn.execute("SELECT * FROM audit WHERE action = 'audit-heads' ORDER BY id").fetchall()

    def head(self) -> Any | None:
        return self.conn.execute(_HEAD).fetchone()

    def row(self, row_id: int) -> Any | None:
        return self.conn.execute("SELECT * FROM audit WHERE id = %s", (row_id,)).fetchone()

    def rows_from(self, start: int = 0) -> list[Any]:
        return self.conn.execute("SELECT * FROM audit WHERE id >= %s ORDER BY id", (start,)).fetchall()

    def chain(self, part: int = 0) -> Iterable[Any]:
        return self.conn.execute("SELECT * FROM audit WHERE part = %s ORDER BY seq", (part,))

    def before(self, row_id: int, part: int = 0) -> tuple[int, str] | None:
        r = self.conn.execute(
            "SELECT seq, hash FROM audit WHERE id < %s AND part = %s ORDER BY id DESC LIMIT 1", (row_id, part)
        ).fetchone()
        return None if r is None else (r[0], r[1])

    def count(self, *, after: int | None = None, through: int) -> int:
        if after is None:
            return int(
                self.conn.execute("SELECT count(*) FROM audit WHERE id <= %s", (through,)).fetchone()[0]
            )
        return int(
            self.conn.execute(
                "SELECT count(*) FROM audit WHERE id > %s AND id <= %s", (after, through)
            ).fetchone()[0]
        )

    def entries(self, f: AuditFilter) -> list[Any]:
        conds: list[str] = ["true"]
        params: list[Any] = []
        if f.target_kind:
            conds.append("target_kind = %s")
            params.append(f.target_kind)
        if f.target_id is not None:
            conds.append("target_id = %s")
            params.append(f.target_id)
        if f.actor:
            conds.append("actor = %s")
            params.append(f.actor)
        if f.action_prefix is not None:
            conds.append("action ILIKE %s ESCAPE '\\'")  # case-insensitive, as on SQLite
            params.append(like_literal(f.action_prefix) + "%")
        elif f.action:
            conds.append("action = %s")
            params.append(f.action)
        for word in f.words:
            conds.append("(lower(reason) ILIKE %s ESCAPE '\\' OR lower(summary) ILIKE %s ESCAPE '\\')")
            pattern = "%" + like_literal(word.lower()) + "%"
            params += [pattern, pattern]
        if f.since is not None:
            conds.append("at >= %s")
            params.append(float(f.since))
        if f.until is not None:
            conds.append("at < %s")
            params.append(float(f.until))
        order = "DESC" if f.newest_first else "ASC"
        return self.conn.execute(
            f"SELECT * FROM audit WHERE {' AND '.join(conds)} ORDER BY id {order} LIMIT %s",
            [*params, int(f.limit)],
        ).fetchall()

    def adders(self, target_kind: str, target_ids: Sequence[str]) -> list[tuple[str, str]]:
        ids = list(target_ids)
        if not ids:
            return []
        rows = self.conn.execute(
            "SELECT target_id, actor FROM audit WHERE target_kind = %s AND action = 'add'"
            " AND target_id = ANY(%s) ORDER BY id DESC",
            (target_kind, ids),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def texts_of(self, target_kind: str, target_ids: Sequence[str]) -> list[tuple[int, str, str]]:
        ids = [str(i) for i in target_ids]
        out: list[tuple[int, str, str]] = []
        for k in range(0, len(ids), 500):
            part = ids[k : k + 500]
            rows = self.conn.execute(
                "SELECT id, reason, summary FROM audit WHERE target_kind = %s"
                " AND target_id = ANY(%s) ORDER BY id",
                [target_kind, part],
            ).fetchall()
            out += [(int(r[0]), str(r[1] or ""), str(r[2] or "")) for r in rows]
        return out

    def texts_after(self, after_id: int, limit: int) -> list[tuple[int, str, str]]:
        rows = self.conn.execute(
            "SELECT id, reason, summary FROM audit WHERE id > %s ORDER BY id LIMIT %s", (after_id, limit)
        ).fetchall()
        return [(int(r[0]), str(r[1] or ""), str(r[2] or "")) for r in rows]

    def meta_value(self, key: str) -> Any | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else row[0]

    def database_path(self) -> str:
        return ""  # a server database has no file: the anchor goes by its id and place

    def database_place(self) -> tuple[str, str] | None:
        return audit.database_place(self.conn)
