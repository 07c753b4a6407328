"""`vector_staging` rows in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Sequence

from engine.storage.gateways.vector_staging import VectorStagingRows


class SqliteVectorStagingRows(VectorStagingRows):
    def put_many(self, rows: Sequence[tuple[int, bytes]]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO vector_staging(memory_id, embedding) VALUES (?, ?)",
            [(int(i), b) for i, b in rows],
        )

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM vector_staging").fetchone()[0])

    def missing(self, limit: int) -> list[tuple[int, str]]:
        rows = self.conn.execute(
            "SELECT id, content FROM memories m WHERE NOT EXISTS"
            " (SELECT 1 FROM vector_staging s WHERE s.memory_id = m.id) ORDER BY id LIMIT ?",
            (int(limit),),
        ).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def missing_count(self) -> int:
        return int(
            self.conn.execute(
                "SELECT count(*) FROM memories m WHERE NOT EXISTS"
                " (SELECT 1 FROM vector_staging s WHERE s.memory_id = m.id)"
            ).fetchone()[0]
        )

    def clear(self) -> None:
        self.conn.execute("DELETE FROM vector_staging")
