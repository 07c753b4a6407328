"""The `audit` table gateway (the hash-chained trail of every mutation): its only writer.

The chain's logic (hashing, linking, re-keying, the rewrite a forget makes) is the audit service's
(engine/audit/); here are the writes it makes, each inside the caller's transaction. Row text is
stored exactly as given: the hashes are over it."""

from __future__ import annotations

from typing import Any

from engine.storage.gateways.base import Gateway

GENESIS_LINK = "0" * 64  # engine.audit.hashing.GENESIS (the port cannot import it): an empty chain's link


class ChainMoved(Exception):
    """An append checked against the chain's head (`insert(check_prev=True)`) found another row
    there: nothing was appended; read the head again (the lock is held: that read is current)."""


class AuditRows(Gateway):
    """Operations on `audit` rows, inside the caller's transaction."""

    partitions: int = 1  # how many chains appends spread over (PostgreSQL: postgres.audit_partitions)
    # Did this transaction write audit rows? The anchor reads nothing after a write that did not
    # (engine/audit/anchor.py). None: not tracked here (the anchor reads after every write).
    wrote: bool | None = None

    def lock_chain(self, part: int | None = None, *, prefer: str = "") -> int:
        """Hold one chain's head for the rest of the writing transaction (the next append to that
        chain reads the head this one commits); which chain (partition) it is. SQLite: one chain,
        and its writer already holds the whole file (BEGIN IMMEDIATE): 0, nothing to do. PostgreSQL:
        a free partition's head row (FOR UPDATE SKIP LOCKED, starting from the one `prefer` (the
        writer's actor) hashes to, so one writer keeps one chain and two writers rarely share one),
        so concurrent audited writes do not queue on one head; `part` given: that one (waiting).
        A transaction keeps the partition it took."""
        raise NotImplementedError

    def lock_chain_last(self, *, prefer: str = "") -> tuple[int, Any | None, bool]:
        """`lock_chain(prefer=...)` and that chain's newest row (None: empty), and whether the row
        is surely current. PostgreSQL may answer both in one statement whose snapshot can predate
        the previous holder's commit (False): an append linking to that row passes `check_prev`."""
        part = self.lock_chain(prefer=prefer)
        return part, self.conn.audit_queries.last(part), True

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
        """Append one row as given to chain `part` (the one `lock_chain` returned; `digest`: its
        text's keyed digest, engine/audit/hashing.py); its id. `check_prev`: only if `prev_hash`
        is still the chain's newest row's hash (GENESIS_LINK: empty), else ChainMoved (a single
        writer's reads are always current: SQLite has nothing to check)."""
        raise NotImplementedError

    def redact(self, row_id: int, reason: str, summary: str, redaction: str) -> None:
        """Replace a digest-chained row's text with its redaction and the keyed mark of it (its link,
        hash and digest unchanged: no re-chain)."""
        raise NotImplementedError

    def set_digest(self, row_id: int, prev_hash: str, hash: str, digest: str) -> None:
        """Set a row's link, hash and text digest (re-keying an unkeyed row into the digest chain)."""
        raise NotImplementedError

    def relink(self, row_id: int, prev_hash: str, hash: str) -> None:
        """Set a row's link and hash (its text unchanged): re-keying an unkeyed chain."""
        raise NotImplementedError

    def set_text(
        self, row_id: int, reason: str, summary: str, *, prev_hash: str | None = None, hash: str | None = None
    ) -> None:
        """Replace a row's reason and summary and, when given, its link and hash (a forget's
        redaction; a row already broken keeps its old link and hash)."""
        raise NotImplementedError
