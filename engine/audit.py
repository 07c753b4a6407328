"""The audit trail: every mutation appends who / what / when / why, hash-chained to the row
before it so an edit or a deleted row shows as a break. Rows never hold forgotten content."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

GENESIS = "0" * 64


def row_hash(prev_hash: str, at: float, actor: str, action: str, target_kind: str,
             target_id: str, reason: str, summary: str) -> str:
    payload = json.dumps([prev_hash, round(at, 6), actor, action, target_kind, target_id,
                          reason, summary], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def append(conn, *, at: float, actor: str, action: str, target_kind: str = "",
           target_id: object = "", reason: str = "", summary: object = "") -> int:
    """Append one audit row inside the caller's write transaction."""
    if not isinstance(summary, str):
        summary = json.dumps(summary, ensure_ascii=False, separators=(",", ":"), default=str)
    tid = "" if target_id is None else str(target_id)
    last = conn.execute("SELECT hash FROM audit ORDER BY id DESC LIMIT 1").fetchone()
    prev = last[0] if last else GENESIS
    h = row_hash(prev, at, actor, action, target_kind, tid, reason or "", summary)
    cur = conn.execute(
        "INSERT INTO audit(at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash)"
        " VALUES (?,?,?,?,?,?,?,?,?)",
        (at, actor, action, target_kind, tid, reason or "", summary, prev, h))
    return int(cur.lastrowid)


def snippet(text: str, n: int = 60) -> str:
    """A short preview of content for an audit summary (forget scrubs these; see forget.py)."""
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


# -- reading the trail -------------------------------------------------------------------------------


@dataclass
class AuditEntry:
    id: int
    at: float
    actor: str
    action: str
    target_kind: str
    target_id: str
    reason: str
    summary: object          # the before -> after summary (a dict when it was recorded as one)
    hash: str


@dataclass
class ChainCheck:
    ok: bool
    rows: int
    first_bad_id: int | None = None      # the first row whose hash or link does not hold
    message: str = ""
    problems: list[str] = field(default_factory=list)


def _entry(r) -> AuditEntry:
    try:
        summary = json.loads(r["summary"]) if r["summary"][:1] in ("{", "[") else r["summary"]
    except ValueError:
        summary = r["summary"]
    return AuditEntry(id=r["id"], at=r["at"], actor=r["actor"], action=r["action"],
                      target_kind=r["target_kind"], target_id=r["target_id"], reason=r["reason"],
                      summary=summary, hash=r["hash"])


def list_entries(conn, *, target: str | None = None, actor: str | None = None,
                 action: str | None = None, since: float | None = None, until: float | None = None,
                 limit: int = 500, newest_first: bool = True) -> list[AuditEntry]:
    """Audit rows matching every given filter. `target` is an id ("12") or kind:id ("memory:12")."""
    where, params = ["1=1"], []
    if target:
        kind, _, tid = str(target).rpartition(":")
        if kind:
            where.append("target_kind = ?"); params.append(kind)
        where.append("target_id = ?"); params.append(tid)
    if actor:
        where.append("actor = ?"); params.append(actor)
    if action:
        where.append("action = ?"); params.append(action)
    if since is not None:
        where.append("at >= ?"); params.append(float(since))
    if until is not None:
        where.append("at < ?"); params.append(float(until))
    order = "DESC" if newest_first else "ASC"
    rows = conn.execute(f"SELECT * FROM audit WHERE {' AND '.join(where)} ORDER BY id {order} LIMIT ?",
                        [*params, int(limit)]).fetchall()
    return [_entry(r) for r in rows]


def verify_chain(conn, *, limit_problems: int = 20) -> ChainCheck:
    """Recompute every row's hash and link. A changed, inserted or deleted row shows as a break.
    (Forget's redaction re-chains on purpose and says so in its own audit row.)"""
    prev = GENESIS
    n = 0
    problems: list[str] = []
    first_bad = None
    for r in conn.execute("SELECT * FROM audit ORDER BY id"):
        n += 1
        if r["prev_hash"] != prev:
            problems.append(f"row {r['id']}: link does not match the row before it")
            first_bad = first_bad or r["id"]
        h = row_hash(r["prev_hash"], r["at"], r["actor"], r["action"], r["target_kind"],
                     r["target_id"], r["reason"], r["summary"])
        if h != r["hash"]:
            problems.append(f"row {r['id']}: content does not match its hash")
            first_bad = first_bad or r["id"]
        prev = r["hash"]
        if len(problems) >= limit_problems:
            break
    ok = not problems
    msg = f"audit chain intact ({n} rows)" if ok else f"audit chain broken at row {first_bad}"
    return ChainCheck(ok, n, first_bad, msg, problems)


def rewrite(conn, changes: dict[int, tuple[str, str]]) -> int:
    """Replace (reason, summary) of the given rows and re-chain every row from the first of them,
    inside the caller's transaction. Used only by forget, whose own audit row lists the ids."""
    if not changes:
        return 0
    start = min(changes)
    last = conn.execute("SELECT hash FROM audit WHERE id < ? ORDER BY id DESC LIMIT 1", (start,)).fetchone()
    prev = last[0] if last else GENESIS
    rows = conn.execute("SELECT * FROM audit WHERE id >= ? ORDER BY id", (start,)).fetchall()
    for r in rows:
        reason, summary = changes.get(r["id"], (r["reason"], r["summary"]))
        h = row_hash(prev, r["at"], r["actor"], r["action"], r["target_kind"], r["target_id"],
                     reason, summary)
        conn.execute("UPDATE audit SET reason = ?, summary = ?, prev_hash = ?, hash = ? WHERE id = ?",
                     (reason, summary, prev, h, r["id"]))
        prev = h
    return len(rows)


class AuditMixin:
    """The engine's audit calls (the Forget & Audit pane and `memconsole audit`)."""

    def audit_log(self, *, target: str | None = None, actor: str | None = None,
                  action: str | None = None, since: float | str | None = None,
                  until: float | str | None = None, limit: int = 500) -> list[AuditEntry]:
        from .clock import parse_time

        since = parse_time(since) if isinstance(since, str) else since
        until = parse_time(until) if isinstance(until, str) else until
        with self.store.reading() as conn:
            return list_entries(conn, target=target, actor=actor, action=action, since=since,
                                until=until, limit=limit)

    def verify_audit(self) -> ChainCheck:
        with self.store.reading() as conn:
            return verify_chain(conn)
