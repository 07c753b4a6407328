"""How one audit row is hashed. Rows are chained with HMAC-SHA256 under the installation's audit
key (engine.keys, a 0600 file outside every database), so someone who can write the database but
cannot read the key cannot re-hash an edit. Rows written by older versions used plain sha256: they
are still recognised, as a prefix of the chain only, so an old database verifies and upgrades.

Rows written from issue 24 on (scheme DIGEST) chain over a keyed digest of their text rather than
the text itself: `digest` = HMAC(reason, summary) is stored in the row and the chained hash covers
the link, time, actor, action, target and that digest. Verify checks the text against the digest;
a forget that redacts a row replaces its text and stores `redaction` = HMAC(id, new text), so the
chain is never re-hashed and the redacted text is tamper-evident too (only the key makes either)."""

from __future__ import annotations

import hashlib
import hmac
import json

from engine.keys import derived_key
from engine.storage.port import Connection

GENESIS = "0" * 64
KEYED, PLAIN, DIGEST = "keyed", "plain", "digest"
KEYED_FROM = "audit_keyed_from"  # meta row: the first audit id hashed under the key
DIGEST_FROM = "audit_digest_from"  # meta row: the first audit id chained over its text's digest


def col(r, name: str):
    """A column of a row that may predate it (None when the row has no such column)."""
    try:
        return r[name]
    except (IndexError, KeyError):
        return None


def keyed_from(conn: Connection) -> int | None:
    """The first id the chain was keyed from (a meta row written when keying began): rows from
    there on must be keyed even when none is (a whole chain re-hashed without the key). Data a
    writer controls: the anchor records it too (anchor.py), and the anchor wins."""
    try:
        value = conn.audit_queries.meta_value(KEYED_FROM)
        return int(value) if value is not None else None
    except (ValueError, TypeError, Exception):  # noqa: BLE001 - a damaged row: the anchor still holds
        return None


def payload(
    prev_hash: str,
    at: float,
    actor: str,
    action: str,
    target_kind: str,
    target_id: str,
    reason: str,
    summary: str,
) -> bytes:
    return json.dumps(
        [prev_hash, round(at, 6), actor, action, target_kind, target_id, reason, summary],
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode("utf-8", "surrogatepass")


def row_hash(
    prev_hash: str,
    at: float,
    actor: str,
    action: str,
    target_kind: str,
    target_id: str,
    reason: str,
    summary: str,
) -> str:
    """The legacy, unkeyed hash (anyone can recompute it): recognised, never written anew."""
    return hashlib.sha256(
        payload(prev_hash, at, actor, action, target_kind, target_id, reason, summary)
    ).hexdigest()


class Hasher:
    """Keyed hashes under the audit key (read once per instance; the HMAC state is copied per row)."""

    def __init__(self) -> None:
        self._base = hmac.new(derived_key("audit"), digestmod=hashlib.sha256)

    def _mac(self, data: bytes) -> str:
        h = self._base.copy()
        h.update(data)
        return h.hexdigest()

    def keyed(
        self,
        prev_hash: str,
        at: float,
        actor: str,
        action: str,
        target_kind: str,
        target_id: str,
        reason: str,
        summary: str,
    ) -> str:
        return self._mac(payload(prev_hash, at, actor, action, target_kind, target_id, reason, summary))

    def text_digest(self, reason: str, summary: str) -> str:
        """The keyed digest of a row's text (what a DIGEST row's chained hash covers)."""
        return self._mac(_dumps(["text", reason, summary]))

    def chained(
        self,
        prev_hash: str,
        at: float,
        actor: str,
        action: str,
        target_kind: str,
        target_id: str,
        digest: str,
    ) -> str:
        """A DIGEST row's hash: its link and every field but the text, which enters as its digest."""
        return self._mac(
            _dumps(["v3", prev_hash, round(at, 6), actor, action, target_kind, target_id, digest])
        )

    def redaction(self, row_id: int, reason: str, summary: str) -> str:
        """The mark a forget leaves on a DIGEST row whose text it redacted: the new text, keyed, bound
        to the row (a writer without the key can neither redact a row nor edit a redacted one)."""
        return self._mac(_dumps(["redacted", int(row_id), reason, summary]))

    def text_state(self, r) -> str | None:
        """A DIGEST row's text: "intact" (matches its digest), "redacted" (matches the redaction a
        forget made), None (edited)."""
        if self.text_digest(r["reason"], r["summary"]) == col(r, "digest"):
            return "intact"
        mark = col(r, "redaction")
        if mark and self.redaction(r["id"], r["reason"], r["summary"]) == mark:
            return "redacted"
        return None

    def of(self, scheme: str, prev: str, r, reason: str | None = None, summary: str | None = None) -> str:
        """Row `r` (a sqlite Row) hashed with `scheme` after `prev`, optionally with new text (a
        DIGEST row's hash covers its stored digest: new text never changes it)."""
        if scheme == DIGEST:
            digest = col(r, "digest") or self.text_digest(r["reason"], r["summary"])
            return self.chained(
                prev, r["at"], r["actor"], r["action"], r["target_kind"], r["target_id"], digest
            )
        args = (
            prev,
            r["at"],
            r["actor"],
            r["action"],
            r["target_kind"],
            r["target_id"],
            r["reason"] if reason is None else reason,
            r["summary"] if summary is None else summary,
        )
        return self.keyed(*args) if scheme == KEYED else row_hash(*args)

    def scheme(self, r) -> str | None:
        """How the row's stored hash was made (over its own stored prev_hash), None if neither
        scheme reproduces it: the row was edited. For DIGEST the text is checked apart (text_state)."""
        if col(r, "digest") and self.of(DIGEST, r["prev_hash"], r) == r["hash"]:
            return DIGEST
        if self.of(KEYED, r["prev_hash"], r) == r["hash"]:
            return KEYED
        if self.of(PLAIN, r["prev_hash"], r) == r["hash"]:
            return PLAIN
        return None

    def identity(self, r) -> str:
        """What a row is apart from its text and links (id, time, who, what): a forget rewrites
        reasons and summaries, never these, so a head anchor recognises its row after a redaction."""
        return self._mac(
            json.dumps(
                [
                    "identity",
                    r["id"],
                    round(r["at"], 6),
                    r["actor"],
                    r["action"],
                    r["target_kind"],
                    r["target_id"],
                ],
                ensure_ascii=False,
                separators=(",", ":"),
            ).encode("utf-8", "surrogatepass")
        )


def _dumps(doc: list) -> bytes:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def is_keyed(scheme: str | None) -> bool:
    return scheme in (KEYED, DIGEST)


_hashers: dict[bytes, Hasher] = {}


def hasher() -> Hasher:
    """The Hasher for the current key (the key itself is cached by engine.keys): resolving the key
    per row would cost more than the row. Keyed by the key, so a replaced key is never mixed in."""
    key = derived_key("audit")
    h = _hashers.get(key)
    if h is None:
        h = _hashers[key] = Hasher()
    return h
