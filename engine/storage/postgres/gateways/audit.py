"""`audit` rows in PostgreSQL's SQL. The chain's position (`seq`) is assigned by a trigger inside
the writing transaction (schema.py), per partition (`part`); an append holds its partition's head
row (../audit.py lock_partition)."""

from __future__ import annotations

import zlib
from typing import cast

from engine.storage.gateways.audit import AuditRows
from engine.storage.postgres import audit
from engine.storage.postgres.connection import PgConnection


class PgAuditRows(AuditRows):
    _held: int | None = None  # the partition this transaction holds (a gateway lives one transaction)

    @property
    def partitions(self) -> int:  # type: ignore[override]
        return max(1, audit.PARTITIONS)

    def lock_chain(self, part: int | None = None, *, prefer: str = "") -> int:
        if self._held is not None and part in (None, self._held):
            # held already; locked again (immediate: ours), since a savepoint rolled back (a dry
            # run inside the write) releases a row lock taken after it
            return audit.lock_partition(self.conn, self.partitions, 0, self._held)
        start = (
            zlib.crc32(prefer.encode("utf-8", "surrogatepass"))
            if prefer
            else cast(PgConnection, self.conn).backend_pid  # no flush: the BEGIN still rides along
        )
        self._held = audit.lock_partition(self.conn, self.partitions, start, part)
        return self._held

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
    ) -> int:
        got = self.conn.execute(
            "INSERT INTO audit(at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash,"
            " digest, part) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash, digest, part),
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
