"""Reading the audit trail: its rows as typed entries, filtered (the Audit pane, `memconsole
audit`, MCP), and who added what. engine/audit/log.py writes the trail and re-exports these."""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine.storage.port import Connection
from engine.storage.queries.audit import AuditFilter


@dataclass
class AuditEntry:
    id: int
    at: float
    actor: str
    action: str
    target_kind: str
    target_id: str
    reason: str
    summary: object  # the before -> after summary (a dict when it was recorded as one)
    hash: str


def _entry(r) -> AuditEntry:
    try:
        summary = json.loads(r["summary"]) if r["summary"][:1] in ("{", "[") else r["summary"]
    except ValueError:
        summary = r["summary"]
    return AuditEntry(
        id=r["id"],
        at=r["at"],
        actor=r["actor"],
        action=r["action"],
        target_kind=r["target_kind"],
        target_id=r["target_id"],
        reason=r["reason"],
        summary=summary,
        hash=r["hash"],
    )


def list_entries(
    conn: Connection,
    *,
    target: str | None = None,
    actor: str | None = None,
    action: str | None = None,
    since: float | None = None,
    until: float | None = None,
    limit: int = 500,
    newest_first: bool = True,
    text: str | None = None,
) -> list[AuditEntry]:
    """Audit rows matching every given filter. `target` is an id ("12") or kind:id ("memory:12");
    `action` ending in `*` is a prefix (`forg*`); `text`: every word appears (any case) in the
    reason or the summary."""
    kind = tid = None
    if target:
        kind, _, tid = str(target).rpartition(":")
    prefix = action[:-1] if action and action.endswith("*") else None
    f = AuditFilter(
        target_kind=kind or None,
        target_id=tid,
        actor=actor or None,
        action=action if action and prefix is None else None,
        action_prefix=prefix,
        words=tuple((text or "").split()),
        since=since,
        until=until,
        limit=int(limit),
        newest_first=newest_first,
    )
    return [_entry(r) for r in conn.audit_queries.entries(f)]


def adders(conn: Connection, target_kind: str, ids: list[int]) -> dict[int, str]:
    """Who added each of `ids` (its first `add` row's actor): who actually wrote it."""
    if not ids:
        return {}
    rows = conn.audit_queries.adders(target_kind, [str(i) for i in ids])
    return {int(t): str(a) for t, a in rows}  # oldest last: the first add wins
