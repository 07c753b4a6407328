"""`audit` rows in PostgreSQL's SQL. The chain's position (`seq`) is assigned by a trigger inside
the writing transaction (schema.py), per partition (`part`); an append holds its partition's head
row (../audit.py lock_partition)."""

from __future__ import annotations

import zlib
from typing import Any, cast

from engine.storage.gateways.audit import GENESIS_LINK, AuditRows, ChainMoved
from engine.storage.postgres import audit
from engine.storage.postgres.connection import PgConnection

_COLS = "at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash, digest, part"
_INSERT = f"INSERT INTO audit({_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id"
_INSERT_CHECKED = (
    f"INSERT INTO audit({_COLS}) SELECT * FROM (VALUES (%s::float8, %s::text, %s::text, %s::text,"
    " %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::bigint)) AS v"
    " WHERE (SELECT hash FROM audit WHERE part = %s ORDER BY seq DESC LIMIT 1) IS NOT DISTINCT FROM %s::text"
    " RETURNING id"
)


class PgAuditRows(AuditRows):
    _held: int | None = None  # the partition this transaction holds (a gateway lives one transaction)
    wrote = False  # set by every write below (a gateway lives one transaction)

    @property
    def partitions(self) -> int:  # type: ignore[override]
        return max(1, audit.PARTITIONS)

    def lock_chain(self, part: int | None = None, *, prefer: str = "") -> int:
        if self._held is not None and part in (None, self._held):
            # held already; locked again (immediate: ours), since a savepoint rolled back (a dry
            # run inside the write) releases a row lock taken after it
            return audit.lock_partition(self.conn, self.partitions, 0, self._held)
        self._held = audit.lock_partition(self.conn, self.partitions, self._start(prefer), part)
        return self._held

    def _start(self, prefer: str) -> int:
        if prefer:
            return zlib.crc32(prefer.encode("utf-8", "surrogatepass"))
        return cast(PgConnection, self.conn).backend_pid  # no flush: the BEGIN still rides along

    def lock_chain_last(self, *, prefer: str = "") -> tuple[int, Any | None, bool]:
        if self._held is None:  # the usual append: one statement (../audit.py _PICK_LAST)
            got = audit.lock_free_partition_last(self.conn, self.partitions, self._start(prefer))
        else:  # another append in this transaction: its partition again, one statement
            got = audit.lock_held_partition_last(self.conn, self._held)
        if got is None:
            return super().lock_chain_last(prefer=prefer)
        self._held = got[0]
        return got[0], got[1], False

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
        check_prev: bool = False,
    ) -> int:
        self.wrote = True
        values = (at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash, digest, part)
        if not check_prev:
            return int(self.conn.execute(_INSERT, values).fetchall()[0][0])
        # the head checked in the INSERT's own snapshot (taken after the partition's lock: every
        # earlier holder's commit is in it), so a head read one behind never forks the chain
        got = self.conn.execute(
            _INSERT_CHECKED,
            (*values, part, None if prev_hash == GENESIS_LINK else prev_hash),
        ).fetchall()
        if not got:
            raise ChainMoved(f"audit partition {part} moved past the head read")
        return int(got[0][0])

    def redact(self, row_id: int, reason: str, summary: str, redaction: str) -> None:
        self.wrote = True
        self.conn.execute(
            "UPDATE audit SET reason = %s, summary = %s, redaction = %s WHERE id = %s",
            (reason, summary, redaction, row_id),
        )

    def set_digest(self, row_id: int, prev_hash: str, hash: str, digest: str) -> None:
        self.wrote = True
        self.conn.execute(
            "UPDATE audit SET prev_hash = %s, hash = %s, digest = %s WHERE id = %s",
            (prev_hash, hash, digest, row_id),
        )

    def relink(self, row_id: int, prev_hash: str, hash: str) -> None:
        self.wrote = True
        self.conn.execute(
            "UPDATE audit SET prev_hash = %s, hash = %s WHERE id = %s", (prev_hash, hash, row_id)
        )

    def set_text(
        self, row_id: int, reason: str, summary: str, *, prev_hash: str | None = None, hash: str | None = None
    ) -> None:
        self.wrote = True
        if hash is None:
            self.conn.execute(
                "UPDATE audit SET reason = %s, summary = %s WHERE id = %s", (reason, summary, row_id)
            )
        else:
            self.conn.execute(
                "UPDATE audit SET reason = %s, summary = %s, prev_hash = %s, hash = %s WHERE id = %s",
                (reason, summary, prev_hash, hash, row_id),
            )
