"""`memories` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.storage.gateways.memories import MemoryRows
from engine.storage.postgres.gateways.columns import ident


class PgMemoryRows(MemoryRows):
    def _insert(self, values: Mapping[str, Any]) -> int:
        cols = list(values)
        got = self.conn.execute(
            f"INSERT INTO memories({', '.join(ident(c) for c in cols)})"
            f" VALUES ({', '.join(['%s'] * len(cols))}) RETURNING id",
            [values[c] for c in cols],
        ).fetchall()
        return int(got[0][0])

    def _update(self, memory_id: int, changes: Mapping[str, Any]) -> None:
        cols = list(changes)
        self.conn.execute(
            f"UPDATE memories SET {', '.join(f'{ident(c)} = %s' for c in cols)} WHERE id = %s",
            [*(changes[c] for c in cols), memory_id],
        )

    def _unlink(self, column: str, targets: Sequence[Any]) -> None:
        kind = "bigint[]" if column == "message_id" else "text[]"
        self.conn.execute(
            f"UPDATE memories SET {ident(column)} = NULL WHERE {ident(column)} = ANY(%s::{kind})",
            [list(targets)],
        )

    def row(self, memory_id: int) -> Any:
        return self.conn.execute("SELECT * FROM memories WHERE id = %s", (memory_id,)).fetchone()

    def reinforce(self, memory_id: int, strength: float, now: float, *, count_access: bool) -> None:
        self.conn.execute(
            "UPDATE memories SET anchor_strength = %s, strength = %s, last_reinforced_at = %s,"
            " access_count = access_count + %s, last_accessed_at = %s, archive_at = NULL,"
            " updated_at = %s WHERE id = %s",
            (strength, strength, now, 1 if count_access else 0, now, now, memory_id),
        )

    def reinforce_many(self, rows: Sequence[tuple[int, float]], now: float, *, count_access: bool) -> None:
        if not rows:
            return
        # Nobody reads its answer: it goes in one round trip with the write's next statement
        # (PgConnection.later: a recall's audit row), or with the commit.
        send = getattr(self.conn, "later", None) or self.conn.execute
        send(
            "UPDATE memories m SET anchor_strength = r.s, strength = r.s, last_reinforced_at = %s,"
            " access_count = m.access_count + %s, last_accessed_at = %s, archive_at = NULL,"
            " updated_at = %s FROM unnest(%s::bigint[], %s::float8[]) AS r(id, s) WHERE m.id = r.id",
            (now, 1 if count_access else 0, now, now, [r[0] for r in rows], [r[1] for r in rows]),
        )

    def rows_locked(self, memory_ids: Sequence[int]) -> list[Any]:
        if not memory_ids:
            return []
        # One statement; locks taken in id order, so two recalls of overlapping hits never deadlock.
        return list(
            self.conn.execute(
                "SELECT * FROM memories WHERE id = ANY(%s::bigint[]) ORDER BY id FOR NO KEY UPDATE",
                [sorted(set(memory_ids))],
            ).fetchall()
        )

    def lock_for_dedup(self, agents: Iterable[str]) -> None:
        # The one invariant no row lock can hold (a row that does not exist yet): "no two
        # near-duplicate memories of one agent". A transaction lock per agent, in a fixed order;
        # different agents' writes never wait on each other.
        names = sorted({a or "" for a in agents})
        if names:
            self.conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended('memconsole.dedup:' || a, 0))"
                " FROM unnest(%s::text[]) AS a ORDER BY a",
                [names],
            ).fetchall()

    def delete(self, memory_ids: Sequence[int]) -> int:
        if not memory_ids:
            return 0
        return int(
            self.conn.execute(
                "DELETE FROM memories WHERE id = ANY(%s::bigint[])", [list(memory_ids)]
            ).rowcount
        )

    def unabsorb(self, memory_ids: Sequence[int]) -> None:
        if memory_ids:
            self.conn.execute(
                "UPDATE memories SET tier = 'active', absorbed_into = NULL WHERE id = ANY(%s::bigint[])",
                [list(memory_ids)],
            )

    def mark_all_embedded(self) -> int:
        return int(self.conn.execute("UPDATE memories SET embedded = 1").rowcount)
