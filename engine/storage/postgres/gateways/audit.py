"""`audit` rows in PostgreSQL's SQL. The chain's position (`seq`) is assigned by a trigger inside
the writing transaction (schema.py); appends hold the chain's own advisory lock."""

from __future__ import annotations

from engine.storage.gateways.audit import AuditRows
from engine.storage.postgres import audit


class PgAuditRows(AuditRows):
    def lock_chain(self) -> None:
        audit.lock_chain(self.conn)

    def insert(
        self,
        *,
        at: float,
        actor: str,
        action: str,
        target_kind: str,
        target_id: str,
        reason: str,
        summary: str,
        prev_hash: str,
        hash: str,
        digest: str | None = None,
    ) -> int:
        got = self.conn.execute(
            "INSERT INTO audit(at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash,"
            " digest) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash, digest),
        ).fetchall()
        return int(got[0][0])

    def redact(self, row_id: int, reason: str, summary: str, redaction: str) -> None:
        self.conn.execute(
            "UPDATE audit SET reason = %s, summary = %s, redaction = %s WHERE id = %s",
            (reason, summary, redaction, row_id),
        )

    def set_digest(self, row_id: int, prev_hash: str, hash: str, digest: str) -> None:
        self.conn.execute(
            "UPDATE audit SET prev_hash = %s, hash = %s, digest = %s WHERE id = %s",
            (prev_hash, hash, digest, row_id),
        )

    def relink(self, row_id: int, prev_hash: str, hash: str) -> None:
        self.conn.execute(
            "UPDATE audit SET prev_hash = %s, hash = %s WHERE id = %s", (prev_hash, hash, row_id)
        )

    def set_text(
        self, row_id: int, reason: str, summary: str, *, prev_hash: str | None = None, hash: str | None = None
    ) -> None:
        if hash is None:
            self.conn.execute(
                "UPDATE audit SET reason = %s, summary = %s WHERE id = %s", (reason, summary, row_id)
            )
        else:
            self.conn.execute(
                "UPDATE audit SET reason = %s, summary = %s, prev_hash = %s, hash = %s WHERE id = %s",
                (reason, summary, prev_hash, hash, row_id),
            )
