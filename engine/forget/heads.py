"""Each executed forget case records the audit chain's head right after it (`counts.audit_head`,
[id, hash]), so cutting the tail of the audit log shows from the cases too, beside the anchor the
audit keeps outside the database. Forget's own redaction re-chains rows on purpose: the cases whose
recorded head lies among them follow (rehead)."""

from __future__ import annotations

from engine.audit import log as audit
from engine.tables import forget_requests
from engine.types import load_json

GENESIS = "0" * 64


def audit_head(conn) -> tuple[int, str]:
    head = getattr(audit, "head", None)
    if head is not None:
        return head(conn)
    r = conn.execute("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").fetchone()
    return (int(r[0]), r[1]) if r else (0, GENESIS)


def _cases(conn, first: int = 0) -> list[tuple[int, dict]]:
    out = []
    for r in conn.execute(
        "SELECT id, counts FROM forget_requests WHERE status IN ('executed', 'verified')"
        " AND json_valid(counts) AND json_type(counts, '$.audit_head') = 'array'"
        " AND json_extract(counts, '$.audit_head[0]') >= ?",
        (first,),
    ).fetchall():
        counts = load_json(r[1])
        head = counts.get("audit_head") if isinstance(counts, dict) else None
        if isinstance(head, list) and len(head) == 2 and isinstance(head[0], int):
            out.append((int(r[0]), counts))
    return out


def rehead_cases(conn, first: int) -> None:
    """Audit rows from `first` on were just re-chained: cases that recorded one of them follow."""
    for cid, counts in _cases(conn, first):
        row = conn.execute("SELECT hash FROM audit WHERE id = ?", (counts["audit_head"][0],)).fetchone()
        if row is not None and row[0] != counts["audit_head"][1]:
            counts["audit_head"][1] = row[0]
            forget_requests.set_counts(conn, cid, counts)


def check_case_heads(conn) -> list[str]:
    """Problems: a case whose recorded audit head is gone from the log or no longer matches it."""
    out = []
    for cid, counts in _cases(conn):
        hid, h = counts["audit_head"]
        row = conn.execute("SELECT hash FROM audit WHERE id = ?", (hid,)).fetchone()
        if row is None:
            out.append(f"forget case {cid} recorded audit row {hid}, which is gone (the log was cut)")
        elif row[0] != h:
            out.append(
                f"forget case {cid} recorded audit row {hid} with another hash (the log was rewritten)"
            )
    return out
