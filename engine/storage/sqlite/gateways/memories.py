"""`memories` rows in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.batches import chunked
from engine.storage.gateways.memories import MemoryRows
from engine.storage.sqlite.gateways.columns import marks


class SqliteMemoryRows(MemoryRows):
    def _insert(self, values: Mapping[str, Any]) -> int:
        cols = list(values)
        got = self.conn.execute(
            f"INSERT INTO memories({', '.join(cols)}) VALUES ({marks(len(cols))}) RETURNING id",
            [values[c] for c in cols],
        ).fetchall()
        return int(got[0][0])

    def _update(self, memory_id: int, changes: Mapping[str, Any]) -> None:
        cols = list(changes)
        self.conn.execute(
            f"UPDATE memories SET {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
            [*(changes[c] for c in cols), memory_id],
        )

    def _unlink(self, column: str, targets: Sequence[Any]) -> None:
        for part in chunked(targets):
            self.conn.execute(
                f"UPDATE memories SET {column} = NULL WHERE {column} IN ({marks(len(part))})", part
            )

    def row(self, memory_id: int) -> Any:
        return self.conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()

    def reinforce(self, memory_id: int, strength: float, now: float, *, count_access: bool) -> None:
        self.conn.execute(
            "UPDATE memories SET anchor_strength = ?, strength = ?, last_reinforced_at = ?,"
            " access_count = access_count + ?, last_accessed_at = ?, archive_at = NULL,"
            " updated_at = ? WHERE id = ?",
            (strength, strength, now, 1 if count_access else 0, now, now, memory_id),
        )

    def reinforce_many(self, rows: Sequence[tuple[int, float]], now: float, *, count_access: bool) -> None:
        for part in chunked(rows):
            self.conn.execute(
                "UPDATE memories SET anchor_strength = r.column2, strength = r.column2,"
                " last_reinforced_at = ?, access_count = access_count + ?, last_accessed_at = ?,"
                f" archive_at = NULL, updated_at = ? FROM (VALUES {', '.join(['(?, ?)'] * len(part))}) AS r"
                " WHERE memories.id = r.column1",
                [
                    now,
                    1 if count_access else 0,
                    now,
                    now,
                    *(v for r in part for v in (int(r[0]), float(r[1]))),
                ],
            )

    def rows_locked(self, memory_ids: Sequence[int]) -> list[Any]:
        out: list[Any] = []
        for part in chunked(sorted(set(memory_ids))):
            out += self.conn.execute(
                f"SELECT * FROM memories WHERE id IN ({marks(len(part))}) ORDER BY id", part
            ).fetchall()
        return out

    def delete(self, memory_ids: Sequence[int]) -> int:
        n = 0
        for part in chunked(memory_ids):
            n += self.conn.execute(f"DELETE FROM memories WHERE id IN ({marks(len(part))})", part).rowcount
        return n

    def unabsorb(self, memory_ids: Sequence[int]) -> None:
        for part in chunked(memory_ids):
            self.conn.execute(
                f"UPDATE memories SET tier = 'active', absorbed_into = NULL WHERE id IN ({marks(len(part))})",
                part,
            )

    def mark_all_embedded(self) -> int:
        return int(self.conn.execute("UPDATE memories SET embedded = 1").rowcount)
