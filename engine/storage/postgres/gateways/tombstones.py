"""`tombstones` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Sequence

from engine.storage.gateways.tombstones import TombstoneRows

# Writes run concurrently on a server: a forget's tombstones and the check every remember makes
# against them take turns. The check holds this lock shared (remembers never wait on each other),
# a forget exclusive from the start of its write (eraser.py `tolerant`) and at each tombstone's
# insert, to the end of each transaction: a forget sees every remember that committed before it,
# and a remember that commits after a forget has seen its tombstones.
FORGET_LOCK = int.from_bytes(b"MCfg", "big")


class PgTombstoneRows(TombstoneRows):
    def insert(
        self,
        request_id: int,
        kind: str,
        target_id: str,
        ident_hash: str | None,
        content_hash: str | None,
        at: float,
    ) -> None:
        self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (FORGET_LOCK,)).fetchone()
        self.conn.execute(
            "INSERT INTO tombstones(request_id, target_kind, target_id, content_sha256, ident_hash,"
            " content_hash, forgotten_at) VALUES (%s, %s, %s, '', %s, %s, %s)",
            (request_id, kind, target_id, ident_hash, content_hash, at),
        )

    def _one(self, sql: str, params: Sequence[object] = ()) -> bool:
        return self.conn.execute(sql, params).fetchone() is not None

    def has_ident(self, kind: str, ident_hash: str) -> bool:
        return self._one(
            "SELECT 1 FROM tombstones WHERE target_kind = %s AND ident_hash = %s LIMIT 1", (kind, ident_hash)
        )

    def has_legacy_session(self, session_id: str) -> bool:
        return self._one(
            "SELECT 1 FROM tombstones WHERE target_kind = 'session' AND target_id = %s"
            " AND content_sha256 != '' LIMIT 1",
            (session_id,),
        )

    def has_content(self, kinds: Sequence[str], content_hash: str) -> bool:
        return self._one(
            "SELECT 1 FROM tombstones WHERE target_kind = ANY(%s) AND content_hash = %s LIMIT 1",
            (list(kinds), content_hash),
        )

    def has_legacy_content(self, kind: str, sha256: str) -> bool:
        return self._one(
            "SELECT 1 FROM tombstones WHERE target_kind = %s AND content_sha256 = %s"
            " AND content_sha256 != '' LIMIT 1",
            (kind, sha256),
        )

    def any_content(self) -> bool:
        # Two statements: the check's snapshot must be taken after the lock is granted.
        self.conn.execute("SELECT pg_advisory_xact_lock_shared(%s)", (FORGET_LOCK,)).fetchone()
        return self._one("SELECT 1 FROM tombstones WHERE content_hash IS NOT NULL LIMIT 1")
