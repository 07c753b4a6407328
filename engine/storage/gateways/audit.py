"""The `audit` table gateway (the hash-chained trail of every mutation): its only writer.

The chain's logic (hashing, linking, re-keying, the rewrite a forget makes) is the audit service's
(engine/audit/); here are the writes it makes, each inside the caller's transaction. Row text is
stored exactly as given: the hashes are over it."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class AuditRows(Gateway):
    """Operations on `audit` rows, inside the caller's transaction."""

    def lock_chain(self) -> None:
        """Hold the chain's head for the rest of the writing transaction: the next append reads
        the head this one commits. SQLite's writer already holds the whole file (BEGIN
        IMMEDIATE): nothing to do; on PostgreSQL a transaction-level advisory lock, so appends stay
        ordered even where writes of other rows run concurrently."""
        raise NotImplementedError

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
        """Append one row as given (`digest`: its text's keyed digest, engine/audit/hashing.py); its id."""
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
