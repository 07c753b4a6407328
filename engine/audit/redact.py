"""Forget's redaction of the audit trail (issue 24), in two steps whose cost inside the deletion's
write transaction does not depend on the log's length:

1. `redact_scoped`, inside the deletion's transaction: the rows about the forgotten records (their
   add/edit/import previews, found through the audit_target index), redacted in place
   (engine/audit/log.py rewrite: digest-chained rows are never re-hashed).
2. `sweep`, after the deletion committed: every other row that quotes the text (an operator's reason,
   a curator run's summary), found in short reads of the whole log that block no writer, then
   redacted in one short write whose own audit row (`forget-audit-sweep`) lists the ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from engine.audit import log as audit
from engine.forget.heads import rehead_cases
from engine.forget.verify import Secrets, char_windows, redact, rows_containing, valid, walk_strings

if TYPE_CHECKING:
    from engine.storage.port import Connection

SWEEP_CHUNK = 20_000  # rows per read: each read is its own short transaction


def _redacted(reason: str, summary: str, sec: Secrets) -> tuple[str, str]:
    new_reason, new_summary = redact(reason, sec), summary
    if summary[:1] in ("{", "["):
        try:
            doc = json.loads(summary)
            new = walk_strings(doc, lambda s: redact(s, sec))
            if new != doc:
                new_summary = json.dumps(new, ensure_ascii=False, separators=(",", ":"))
        except ValueError:
            new_summary = redact(summary, sec)
    else:
        new_summary = redact(summary, sec)
    return new_reason, new_summary


def changes_for(rows: Iterable[tuple[int, str, str]], texts: list[str]) -> dict[int, tuple[str, str]]:
    """The new (reason, summary) of each of `rows` that quotes one of `texts`."""
    sec = char_windows(texts)
    rows = list(rows)
    if not sec or not rows:
        return {}
    out: dict[int, tuple[str, str]] = {}
    for i in sorted(rows_containing([f"{r[1]}\n{r[2]}" for r in rows], texts)):
        rid, reason, summary = rows[i]
        new = _redacted(reason, summary, sec)
        if new != (reason, summary):
            out[rid] = (valid(new[0]), valid(new[1]))
    return out


def redact_scoped(conn: Connection, texts: list[str], targets: dict[str, Iterable[Any]]) -> list[int]:
    """Step 1: redact the rows about `targets` ({target_kind: ids}) that quote `texts`; the ids."""
    rows: dict[int, tuple[int, str, str]] = {}
    for kind, ids in targets.items():
        for r in conn.audit_queries.texts_of(kind, [str(i) for i in ids]):
            rows[r[0]] = r
    return audit.rewrite(conn, changes_for(sorted(rows.values()), texts))


def suspects(reading: Callable[[], Any], texts: list[str], chunk: int = SWEEP_CHUNK) -> list[int]:
    """Step 2's read: ids of rows anywhere in the log that quote `texts`, in short reads."""
    if not char_windows(texts):
        return []
    found: list[int] = []
    after = 0
    while True:
        with reading() as conn:
            rows = conn.audit_queries.texts_after(after, chunk)
        if not rows:
            return found
        found += [rows[i][0] for i in sorted(rows_containing([f"{r[1]}\n{r[2]}" for r in rows], texts))]
        after = rows[-1][0]


def sweep_write(
    conn: Connection, ids: list[int], texts: list[str], *, at: float, actor: str, request_id: int
) -> list[int]:
    """Step 2's write: redact the suspects (re-read here, in the writing transaction) and record it."""
    rows = []
    for rid in ids:
        r = conn.audit_queries.row(rid)
        if r is not None:
            rows.append((int(r["id"]), str(r["reason"]), str(r["summary"])))
    done = audit.rewrite(conn, changes_for(rows, texts))
    if done:
        rehead_cases(conn, min(done))  # moves only after an older-format row was re-chained
        audit.append(
            conn,
            at=at,
            actor=actor,
            action="forget-audit-sweep",
            target_kind="forget_request",
            target_id=request_id,
            reason="audit rows quoting forgotten text outside the forgotten records, redacted",
            summary={"audit_redacted_ids": done},
        )
    return done
