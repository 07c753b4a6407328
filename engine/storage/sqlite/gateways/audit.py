"""`audit` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.audit import AuditRows


class SqliteAuditRows(AuditRows):
    def lock_chain(self, part: int | None = None, *, prefer: str = "") -> int:
        return 0  # one chain; the writer holds the whole file (BEGIN IMMEDIATE)

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
        part: int = 0,
        check_prev: bool = False,  # the file's one writer read its head under its lock: current
    ) -> int:
        got = self.conn.execute(
            "INSERT INTO audit(at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash,"
            " digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash, digest),
        ).fetchall()
        return int(got[0][0])

    def redact(self, row_id: int, reason: str, summary: str, redaction: str) -> None:
        self.conn.execute(
            "UPDATE audit SET reason = ?, summary = ?, redaction = ? WHERE id = ?",
            (reason, summary, redaction, row_id),
        )

    def set_digest(self, row_id: int, prev_hash: str, hash: str, digest: str) -> None:
        self.conn.execute(
            "UPDATE audit SET prev_hash = ?, hash = ?, digest = ? WHERE id = ?",
            (prev_hash, hash, digest, row_id),
        )

    def relink(self, row_id: int, prev_hash: str, hash: str) -> None:
        self.conn.execute("UPDATE audit SET prev_hash = ?, hash = ? WHERE id = ?", (prev_hash, hash, row_id))

    def set_text(
        self, row_id: int, reason: str, summary: str, *, prev_hash: str | None = None, hash: str | None = None
    ) -> None:
        if hash is None:
            self.conn.execute(
                "UPDATE audit SET reason = ?, summary = ? WHERE id = ?", (reason, summary, row_id)
            )
        else:
            self.conn.execute(
                "UPDATE audit SET reason = ?, summary = ?, prev_hash = ?, hash = ? WHERE id = ?",
                (reason, summary, prev_hash, hash, row_id),
            )
