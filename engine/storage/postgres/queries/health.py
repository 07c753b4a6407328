"""Health read model in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.queries.health import HealthQueries

_ORPHANS = {
    "messages": "SELECT m.id FROM messages m LEFT JOIN sessions s ON s.id = m.session_id WHERE s.id IS NULL",
    "absorbed_into": (
        "SELECT m.id FROM memories m LEFT JOIN memories t ON t.id = m.absorbed_into"
        " WHERE m.absorbed_into IS NOT NULL AND t.id IS NULL"
    ),
    "rule_absorbed_into": (
        "SELECT r.id FROM rules r LEFT JOIN rules t ON t.id = r.absorbed_into"
        " WHERE r.absorbed_into IS NOT NULL AND t.id IS NULL"
    ),
    "rule_history": (
        "SELECT h.id FROM rule_history h LEFT JOIN rules r ON r.id = h.rule_id WHERE r.id IS NULL"
    ),
    "flow_runs": "SELECT f.id FROM flow_runs f LEFT JOIN flows w ON w.id = f.flow_id WHERE w.id IS NULL",
}


class PgHealthQueries(HealthQueries):
    def _count(self, table: str) -> int:
        return int(self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def _orphans(self, check: str) -> list[int]:
        return [r[0] for r in self.conn.execute(_ORPHANS[check]).fetchall()]

    def pending_vectors(self, limit: int) -> tuple[int, list[int]]:
        n = self.conn.execute("SELECT count(*) FROM memories WHERE embedded = 0").fetchone()[0]
        ids = self.conn.execute("SELECT id FROM memories WHERE embedded = 0 ORDER BY id LIMIT %s", (limit,))
        return int(n), [r[0] for r in ids.fetchall()]
