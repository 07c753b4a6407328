"""`memories` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
