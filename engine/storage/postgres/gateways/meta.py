"""`meta` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.meta import MetaRows


class PgMetaRows(MetaRows):
    def get(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else row[0]

    def all(self) -> dict[str, str]:
        return {str(k): v for k, v in self.conn.execute("SELECT key, value FROM meta").fetchall()}

    def put(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (%s, %s)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def put_missing(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING", (key, value)
        )
