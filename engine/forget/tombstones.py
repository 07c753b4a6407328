"""Tombstones: what a forget leaves behind so the forgotten does not come back, without the text.

A tombstone keeps two keyed hashes (HMAC under the installation key, engine/keys.py), never the text:
- `ident_hash`: the source identity (a session id, a skill/flow name, a memory's source key), so a
  re-import of the same record is recognised whatever its content became;
- `content_hash`: the content, whitespace-collapsed and case-folded, so a copy of the record under
  another identity (a copied Hermes home, a JSONL export written before the forget) is recognised too.
A plain sha256 of short text is a dictionary away from the text; the keyed hashes are useless to
someone who holds only the database.

What forget records per kind (ident / content): session: session id / none (titles repeat);
message: none / content (none when its whole session goes: the session id covers it);
memory: `hermes_skill:<name>` for a skill's memory, else none / content; rule: none / text;
flow: name / flow_text(description, steps). Rows written before keyed hashes
carry `content_sha256` (plain, exact text) and, for sessions, the session id in `target_id`:
`is_forgotten` still honours them.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from engine.keys import keyed_hash

if TYPE_CHECKING:
    from engine.storage.port import Connection

KINDS = ("memory", "session", "message", "rule", "flow")
_CONTENT = "tombstone-content"
_IDENT = "tombstone-ident"


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def digest(text: str) -> str:
    """Keyed hash of the content (whitespace-collapsed, case-folded)."""
    return keyed_hash(_CONTENT, _norm(text))


def ident_digest(kind: str, ident: str) -> str:
    """Keyed hash of a source identity of one kind (a session id, a flow name...)."""
    return keyed_hash(_IDENT, f"{kind}\x00{ident}")


def flow_text(description: str, steps: list[str]) -> str:
    """A flow's content as its tombstone hashes it (an importer hashes a re-imported skill's
    flow the same way: description, then each step, one per line)."""
    return "\n".join([description or "", *[str(x) for x in steps]])


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown tombstone kind {kind!r}")
    return kind


def is_forgotten(conn: Connection, *, kind: str, ident: str | None = None, text: str | None = None) -> bool:
    """True if a tombstone of this kind matches the identity or the content."""
    _kind(kind)
    rows = conn.tombstones
    if ident is not None and str(ident) != "":
        ident = str(ident)
        if rows.has_ident(kind, ident_digest(kind, ident)):
            return True
        if kind == "session" and rows.has_legacy_session(ident):  # legacy rows: the session id itself
            return True
    if isinstance(text, str) and _norm(text):
        if rows.has_content([kind], digest(text)):
            return True
        legacy = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        if rows.has_legacy_content(kind, legacy):
            return True
    return False


def any_forgotten(conn: Connection, texts: list[str]) -> list[int]:
    """Indexes of `texts` a forget removed as a memory's, a message's or a rule's content: what
    `remember` through any door refuses. One query per text, none when there are no tombstones."""
    rows = conn.tombstones
    if not rows.any_content():
        return []
    return [
        i
        for i, t in enumerate(texts)
        if isinstance(t, str) and _norm(t) and rows.has_content(("memory", "message", "rule"), digest(t))
    ]


def record(
    conn: Connection,
    *,
    request_id: int,
    kind: str,
    target_id: str,
    ident: str | None,
    text: str | None,
    at: float,
) -> None:
    """One tombstone (inside the forget's transaction). Empty content gets no content hash: it
    would match every empty record."""
    _kind(kind)
    ih = ident_digest(kind, str(ident)) if ident is not None and str(ident) != "" else None
    ch = digest(text) if isinstance(text, str) and _norm(text) else None
    conn.tombstones.insert(request_id, kind, str(target_id), ih, ch, at)
