"""The deletion of a forget case, inside its transaction: seal the texts, leave tombstones, delete,
scrub quotes, redact the audit rows that quote the text, record the case as executed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.audit import log as audit
from engine.audit.redact import redact_scoped
from engine.forget import tombstones
from engine.forget.cases import query_digest
from engine.forget.heads import audit_head, rehead_cases
from engine.forget.scrub import scrub
from engine.forget.seal import seal
from engine.forget.select import Selection, close_over, resolve
from engine.forget.types import ForgetRequest
from engine.forget.verify import (
    char_windows,
    redact,
)
from engine.forget.workflow import excluded, match_mode
from engine.keys import keyed_hash
from engine.recalls import log as recall_log

if TYPE_CHECKING:
    from engine.storage.erasure import Eraser
    from engine.storage.port import Connection


def delete_case(
    conn: Connection,
    eraser: Eraser,
    req: ForgetRequest,
    token: str,
    memory_ids: list[int] | None,
    message_ids: list[int] | None,
    now: float,
    actor: str,
    db_path: Path,
    compressed: Callable[[Any, dict], int] | None = None,
) -> None:
    """The deletion itself, inside the forget's transaction: seal the texts, leave tombstones,
    delete, scrub quotes (through the store's `eraser`), redact the audit, record the case as
    executed. `compressed(conn, ids)`:
    on a server, how many selected records hold a value stored compressed (engine/forget/levels.py)."""
    sel = (resolve(conn, req.scope_kind, req.scope_value, match_mode(req), excluded(req))
           if req.status == "open" else Selection.from_ids(req.selected))  # fmt: skip
    sel = sel.narrowed(memory_ids, message_ids)
    full = close_over(conn, sel, cascade_sources=req.scope_kind == "memory")
    texts = full.texts(conn)
    strict = [req.scope_value] if req.scope_kind == "query" else []
    # Sealed before the deletion commits: a process killed after the commit leaves a case
    # that any other process can finish (engine/forget/seal.py).
    seal(db_path, token, texts + full.extra_texts(conn), strict, main=len(texts))
    packed = compressed(conn, full.as_ids()) if compressed else 0
    stones = full.stones(conn)
    for kind, tid, ident, text in stones:
        tombstones.record(conn, request_id=req.id, kind=kind, target_id=str(tid), ident=ident,
                          text=text, at=now)  # fmt: skip
    counts = full.delete(conn, texts + strict)
    counts["scrubbed"] = scrub(conn, texts + strict, eraser)
    targets = {"memory": full.memories, "rule": full.rules, "session": [*full.sessions, *full.titles],
               "flow": full.flows, "message": full.messages, "proposal": full.proposals,
               "forget_request": [req.id]}  # fmt: skip
    redacted = redact_audit(conn, texts + strict, targets)
    counts["audit_redacted"] = len(redacted)
    if redacted:  # the redaction recorded in the forget's own (chained) row: which rows it changed
        counts["audit_redacted_ids"] = redacted
    counts["recalls"] = recall_log.forget_in(conn, full.as_ids()["memories"], req.id)  # the recall log's step
    if packed:
        counts["compressed"] = packed
    value = query_digest(req.scope_value) if req.scope_kind == "query" else req.scope_value
    reason = redact(req.reason, char_windows(texts + strict))
    digest = keyed_hash("forget-case", "\n".join(sorted(str(st[1:]) for st in stones)))
    audit.append(conn, at=now, actor=actor, action="forget", target_kind="forget_request",
                 target_id=req.id, reason=reason,
                 summary={"scope": req.scope_kind, "counts": counts, "content_hash": digest})  # fmt: skip
    # The chain's head after this forget: a later truncation of the log shows from the case.
    counts["audit_head"] = list(audit_head(conn))
    conn.forget_requests.executed(req.id, now, value, reason, {**full.as_ids(), "seal": token}, counts)


def redact_audit(conn: Connection, texts: list[str], targets: dict[str, Any]) -> list[int]:
    """Redact the audit rows about the forgotten records that quote their text (add/edit/import
    previews), found through the audit_target index, never by reading the whole log: the rest of
    the log is swept after the commit (engine/audit/redact.py). Digest-chained rows are redacted in
    place (no re-chain); only rows of an older format re-chain, and then the cases whose recorded
    head lies among them follow."""
    done = redact_scoped(conn, texts, targets)
    if done:
        rehead_cases(conn, min(done))
    return done
