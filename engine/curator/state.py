"""What a proposal's members looked like when it was proposed, so approval applies only that;
and the guards that keep a malformed row from failing a curator run (skipped, noted, reported).

A proposal's evidence carries `member_state`: per member, the columns whose change voids the
proposal (text and metadata as keyed hashes — never the text itself, so a forgotten memory leaves
nothing readable here; tier/status, pinned, absorbed_into, access and reinforcement as values).
Apply compares it with the rows now and refuses, naming what changed. Decay's own writes (strength,
score, updated_at) are left out: they change with time alone, not with anyone's decision.

Use is not a change for a merge or a promote: a search or an agent's recall records access (and
reinforces), which neither alters what the proposal would change (text, metadata, tier,
absorption, pin, existence) nor is lost by it (the survivor takes the members' access counts).
In a fleet whose agents keep recalling popular memories, their merges could otherwise never be
approved. An archive or a retire is about idleness: any use still voids it.
"""

from __future__ import annotations

import hashlib

from engine.errors import InvalidInput, cut
from engine.storage.port import Connection

_MEMORY = (
    "content",
    "metadata",
    "kind",
    "category",
    "tier",
    "pinned",
    "absorbed_into",
    "agent",
    "importance",
    "access_count",
    "last_accessed_at",
    "last_reinforced_at",
)
_RULE = ("text", "metadata", "domain", "agent", "pinned", "absorbed_into", "last_reinforced_at")
_HASHED = ("content", "text", "metadata")
# What use alone changes (recording access, the reinforcement it brings), and its audit action.
_USE = frozenset({"access_count", "last_accessed_at", "last_reinforced_at"})
_USE_ACTIONS = ("access",)
# Proposals that use does not void (see the module's docstring).
_USE_KEEPS = frozenset({"merge", "promote"})
# What the operator reads when a column changed.
_WHAT = {
    "content": "its content was edited",
    "text": "its text was edited",
    "metadata": "its metadata changed",
    "tier": "its tier changed (archived or restored)",
    "absorbed_into": "it was merged into another record",
    "pinned": "it was pinned or unpinned",
    "access_count": "it was used (accessed)",
    "last_accessed_at": "it was used (accessed)",
    "last_reinforced_at": "it was reinforced",
    "importance": "its importance changed",
}


def hasher():
    from engine.keys import derived_key

    # Keyed BLAKE2b (the key from the installation secret): a keyed hash like HMAC, ~5x cheaper
    # per call, which counts when a first run proposes tens of thousands of archives.
    key = derived_key("curator-member-state")
    return lambda v: hashlib.blake2b(
        ("" if v is None else str(v)).encode("utf-8", "surrogatepass"), key=key, digest_size=8
    ).hexdigest()


def _state(row, cols, h) -> dict:
    out = {}
    for c in cols:
        v = row[c]
        if c in _HASHED:
            v = h(v)
        elif isinstance(v, float) and v != v:  # NaN never equals itself: compare as text
            v = "nan"
        out[c] = v
    return out


def member_state(conn: Connection, target_kind: str, members: list[int], h=None) -> dict:
    """{str(id): {column: value or keyed hash}} for the members as they are now."""
    h = h or hasher()
    kind, cols = ("memory", _MEMORY) if target_kind == "memory" else ("rule", _RULE)
    ids = [int(m) for m in members]
    found = {
        mid: _state(row, cols, h) for mid, row in conn.curator_queries.member_columns(kind, ids, cols).items()
    }
    return {str(m): found.get(m) for m in ids}


def audit_mark(conn: Connection) -> int:
    """The last audit id when the members were read: any decision on a member after it (archive
    then restore leaves the columns as they were, yet someone decided) voids the proposal."""
    return conn.curator_queries.audit_mark()


def check_unchanged(conn: Connection, proposal_row, evidence: dict) -> None:
    """Refuse (InvalidInput, one line) if any member differs from what was proposed."""
    then = evidence.get("member_state")
    if not isinstance(then, dict):
        return  # proposed before member states were kept
    pid, kind = proposal_row["id"], proposal_row["target_kind"]
    use_keeps = proposal_row["kind"] in _USE_KEEPS
    mark = evidence.get("audit_mark")
    if isinstance(mark, int) and then:
        ids = [str(k) for k in then]
        hit = conn.curator_queries.first_audit_after(
            mark, kind, ids, ignoring=_USE_ACTIONS if use_keeps else ()
        )
        if hit is not None:
            raise InvalidInput(
                f"proposal {pid} is stale: {kind} {hit[0]} changed since it was proposed"
                f" ({cut(hit[1])} in the audit log); reject it and run the curator again"
            )
    now = member_state(conn, kind, [int(k) for k in then if str(k).lstrip("-").isdigit()])
    for mid, was in then.items():
        cur = now.get(str(mid))
        if cur is None:
            why = "it no longer exists (forgotten or deleted)"
        elif not isinstance(was, dict):
            why = "its state was not recorded"
        else:
            changed = [c for c in cur if was.get(c) != cur[c] and not (use_keeps and c in _USE)]
            if not changed:
                continue
            why = _WHAT.get(changed[0], f"its {changed[0]} changed")
        raise InvalidInput(
            f"proposal {pid} is stale: {kind} {mid} changed since it was proposed ({why});"
            " reject it and run the curator again"
        )


def parse_members(text) -> list[int]:
    """A proposal's member list as stored; [] when the row is malformed (planted or damaged), so
    listing and showing the queue still work and approval refuses it with one line."""
    import json

    try:
        v = json.loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        return []
    if not isinstance(v, list) or not all(isinstance(m, int) and not isinstance(m, bool) for m in v):
        return []
    return v


def finite(*values) -> None:
    """Raise ValueError unless every value is a finite number (a malformed row is then skipped)."""
    import math

    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"not a finite number: {v!r}")


class skip:
    """Build one candidate; a malformed row (odd types, non-finite numbers, NULLs where values
    belong) is skipped and noted for the run's report instead of failing the whole run."""

    def __init__(self, notes: list | None, kind: str, row) -> None:
        self.notes, self.kind, self.row = notes, kind, row

    def __enter__(self):
        return self

    def __exit__(self, et, exc, tb) -> bool:
        if et is None or not issubclass(et, (TypeError, ValueError, OverflowError, KeyError, IndexError)):
            return False
        if self.notes is not None:
            self.notes.append(f"{self.kind} {self.row['id']}: {type(exc).__name__}: {str(exc)[:80]}")
        return True


def float_(v) -> float:
    finite(v)
    return float(v)


def int_(v) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"not a whole number: {v!r}")
    return v


def str_(v) -> str:
    if not isinstance(v, str):
        raise TypeError(f"not text: {type(v).__name__}")
    return v
