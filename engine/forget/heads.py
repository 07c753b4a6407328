"""Each executed forget case records the audit chain's head right after it (`counts.audit_head`,
[id, hash]), so cutting the tail of the audit log shows from the cases too, beside the anchor the
audit keeps outside the database. Forget's own redaction re-chains rows on purpose: the cases whose
recorded head lies among them follow (rehead)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.audit import log as audit
from engine.types import load_json

if TYPE_CHECKING:
    from engine.storage.port import Connection

GENESIS = "0" * 64


def audit_head(conn: Connection) -> tuple[int, str]:
    return audit.head(conn)


def _cases(conn: Connection, first: int = 0) -> list[tuple[int, dict]]:
    out = []
    for cid, raw in conn.forget_requests.with_audit_head(first):
        counts = load_json(raw)
        head = counts.get("audit_head") if isinstance(counts, dict) else None
        if isinstance(head, list) and len(head) == 2 and isinstance(head[0], int):
            out.append((cid, counts))
    return out


def rehead_cases(conn: Connection, first: int) -> None:
    """Audit rows from `first` on were just re-chained: cases that recorded one of them follow."""
    for cid, counts in _cases(conn, first):
        now = conn.forget_queries.audit_hash(counts["audit_head"][0])
        if now is not None and now != counts["audit_head"][1]:
            counts["audit_head"][1] = now
            conn.forget_requests.set_counts(cid, counts)


def check_case_heads(conn: Connection) -> list[str]:
    """Problems: a case whose recorded audit head is gone from the log or no longer matches it."""
    out = []
    for cid, counts in _cases(conn):
        hid, h = counts["audit_head"]
        now = conn.forget_queries.audit_hash(hid)
        if now is None:
            out.append(f"forget case {cid} recorded audit row {hid}, which is gone (the log was cut)")
        elif now != h:
            out.append(
                f"forget case {cid} recorded audit row {hid} with another hash (the log was rewritten)"
            )
    return out
