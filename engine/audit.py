"""The audit trail: every mutation appends who / what / when / why, hash-chained to the row
before it so an edit or a deleted row shows as a break. Rows never hold forgotten content."""
from __future__ import annotations

import hashlib
import json

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
