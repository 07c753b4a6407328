"""The audit trail: every mutation appends who / what / when / why, chained to the row before it
with a keyed hash (audit_hash) so an edit, an insert or a deleted row shows as a break, and its
head anchored outside the database (audit_anchor) so a truncated tail does too (audit_verify).
Rows never hold forgotten content."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from engine.audit.anchor import anchored_here
from engine.audit.entries import AuditEntry, adders, list_entries  # noqa: F401 - public names
from engine.audit.hashing import (
    DIGEST,
    DIGEST_FROM,
    GENESIS,
    KEYED_FROM,
    PLAIN,
    Hasher,
    col,
    hasher,
    keyed_from,
    row_hash,  # noqa: F401 - legacy rows (tests build old chains with it)
)
from engine.audit.partitions import HEADS_ACTION, heads_due, heads_summary
from engine.audit.verify import ChainCheck, verify_chain, walk  # noqa: F401 - public names
from engine.storage.gateways.audit import ChainMoved
from engine.storage.port import Connection

# Hashes this process wrote under the key: an append after one of its own skips re-checking it.
_recent: OrderedDict[str, None] = OrderedDict()


def _insert(
    conn: Connection,
    hs: Hasher,
    prev: str,
    at: float,
    actor: str,
    action: str,
    target_kind: str,
    tid: str,
    reason: str,
    summary: str,
    part: int = 0,
    check_prev: bool = False,
) -> tuple[int, str]:
    digest = hs.text_digest(reason, summary)
    h = hs.chained(prev, at, actor, action, target_kind, tid, digest)
    rid = conn.audit.insert(
        at=at,
        actor=actor,
        action=action,
        target_kind=target_kind,
        target_id=tid,
        reason=reason,
        summary=summary,
        prev_hash=prev,
        hash=h,
        digest=digest,
        part=part,
        check_prev=check_prev,
    )
    _recent[h] = None
    if len(_recent) > 256:
        _recent.popitem(last=False)
    return rid, h


def append(
    conn: Connection,
    *,
    at: float,
    actor: str,
    action: str,
    target_kind: str = "",
    target_id: object = "",
    reason: str = "",
    summary: object = "",
) -> int:
    """Append one audit row, keyed, inside the caller's write transaction (an unkeyed chain from
    an older version is upgraded first, see `rekey`)."""
    if not isinstance(summary, str):
        summary = json.dumps(summary, ensure_ascii=False, separators=(",", ":"), default=str)
    tid = "" if target_id is None else str(target_id)
    hs = hasher()
    text = reason or ""
    try:
        part, prev, first_digest, current = _keyed_prev(conn, hs, at, actor)
        rid, h = _insert(
            conn, hs, prev, at, actor, action, target_kind, tid, text, summary, part, not current
        )
    except ChainMoved:  # a holder committed between the pick's snapshot and its lock: read anew
        part, prev, first_digest, _ = _keyed_prev(conn, hs, at, actor, fresh=True)
        rid, h = _insert(conn, hs, prev, at, actor, action, target_kind, tid, text, summary, part)
    if first_digest:
        _mark_digest(conn, rid)
    if heads_due(conn, rid):  # bind every partition's head (engine/audit/partitions.py)
        _insert(conn, hs, h, at, actor, HEADS_ACTION, "audit", "", "", heads_summary(conn), part)
    return rid


def _keyed_prev(
    conn: Connection, hs: Hasher, at: float, actor: str, *, fresh: bool = False
) -> tuple[int, str, bool, bool]:
    """The partition to append to, the hash to link to, whether the row about to be appended
    is the chain's first DIGEST row after rows of an older format (where the digest format begins
    is recorded then; a chain digest-chained from its first row records nothing), and whether the
    head linked to was surely current (else the append checks it: `insert(check_prev=True)`)."""
    if fresh:
        part = conn.audit.lock_chain(prefer=actor)  # held already: the same partition
        last, current = conn.audit_queries.last(part), True
    else:  # the lock and the head in one statement where the adapter can (PostgreSQL)
        part, last, current = conn.audit.lock_chain_last(prefer=actor)
    if not current and not _links_as_is(hs, last):
        # anything but linking to a digest-chained row (a new partition, an older format) is
        # decided on a current read: the partition's lock is held, so its last row cannot move
        last, current = conn.audit_queries.last(part), True
    if last is None and part != 0:  # a new partition (partitions.py)
        first = conn.audit_queries.last(0)
        if first is None or first["hash"] in _recent or hs.scheme(first) == DIGEST:
            if keyed_from(conn) is None:  # a new log: keyed from its first row
                _mark_keyed(conn, 1)
            return part, GENESIS, False, current
        # a chain of an older format (unkeyed, or text in its hashes) in partition 0: extended
        # there up to its first digest-chained row (upgraded first when unkeyed)
        part, last = conn.audit.lock_chain(0), _UNREAD
    prev, first_digest = _keyed_prev_in(conn, hs, at, actor, part, last)
    return part, prev, first_digest, current


def _links_as_is(hs: Hasher, last: Any) -> bool:
    """Does an append link to `last` as it is (a digest-chained row, this process's or keyed)?
    What `_keyed_prev_in` then does has no other read or write, so a head read one behind costs
    only the append's own check."""
    return (
        last is not None
        and col(last, "digest") is not None
        and (last["hash"] in _recent or hs.scheme(last) == DIGEST)
    )


_UNREAD: Any = object()  # `last` not read yet


def _keyed_prev_in(
    conn: Connection, hs: Hasher, at: float, actor: str, part: int, last: Any = _UNREAD
) -> tuple[str, bool]:
    """`_keyed_prev` within partition `part` (0: where rows from before partitions and keying are);
    `last`: its last row when the caller already read it under the partition's lock."""
    if last is _UNREAD:
        last = conn.audit_queries.last(part)
    if last is None:  # digest-chained from its first row: nothing to record
        if keyed_from(conn) is None:  # a new log (partition 0 may be empty beside others: a
            _mark_keyed(conn, 1)  # viewer writing its refusal there may not write meta)
        return GENESIS, False
    first = col(last, "digest") is None and _digest_from(conn) is None
    if last["hash"] in _recent or hs.scheme(last) != PLAIN or _was_keyed(conn):
        return last["hash"], first  # keyed (or tampered with: linked as found, verify reports it)
    rid, h = _upgrade(conn, hs, at, actor, part)
    return h, False  # after an upgrade: every row digest-chained, or where it began recorded


def _digest_from(conn: Connection) -> int | None:
    try:
        value = conn.audit_queries.meta_value(DIGEST_FROM)
        return int(value) if value is not None else None
    except (ValueError, TypeError):
        return None


def _mark_digest(conn: Connection, first_id: int) -> None:
    conn.meta.put(DIGEST_FROM, str(first_id))


def _was_keyed(conn: Connection) -> bool:
    """Was this chain keyed before (the meta row, or an anchor for its id or its place, which only
    keyed versions write)? Then an unkeyed tail is someone's re-hash without the key, and re-keying
    it would launder it."""
    return keyed_from(conn) is not None or anchored_here(conn)


def _upgrade(conn: Connection, hs: Hasher, at: float, actor: str, part: int = 0) -> tuple[int, str]:
    """An unkeyed chain (an older memconsole). Verified intact: re-hash every row under the key.
    Broken: keep every row exactly as found (the break is evidence, never laundered) and say where
    it is; the keyed rows after it pin that prefix. Either way an `audit-rekey` row records it."""
    w = walk(conn, hs, allow_keyed=False, part=part)
    if not w.problems:
        prev = GENESIS
        for r in conn.audit_queries.rows_from():  # into the digest chain: redactable in place
            if (col(r, "part") or 0) != part:
                continue
            digest = hs.text_digest(r["reason"], r["summary"])
            h = hs.chained(prev, r["at"], r["actor"], r["action"], r["target_kind"], r["target_id"], digest)
            conn.audit.set_digest(r["id"], prev, h, digest)
            prev = h
        reason = "audit chain keyed: the unkeyed chain verified intact and was re-hashed under the key"
        summary = {"rekeyed": w.n, "through": w.last_id, "scheme": "hmac-sha256"}
    else:
        prev = w.last_hash
        reason = (
            "audit chain keyed from here: the unkeyed rows before it were already broken and "
            "are kept as found"
        )
        summary = {
            "kept_unkeyed_through": w.last_id,
            "first_bad_id": w.first_bad,
            "problems": w.problems[:5],
            "scheme": "hmac-sha256",
        }
    rid, h = _insert(
        conn,
        hs,
        prev,
        at,
        actor,
        "audit-rekey",
        "audit",
        str(w.last_id),
        reason,
        json.dumps(summary, separators=(",", ":")),
        part,
    )
    _mark_keyed(conn, 1 if not w.problems else rid)
    if w.problems and _digest_from(conn) is None:  # intact: every row is digest-chained now
        _mark_digest(conn, rid)
    return rid, h


def _mark_keyed(conn: Connection, first_id: int) -> None:
    conn.meta.put(KEYED_FROM, str(first_id))


def rekey(conn: Connection, *, at: float, actor: str) -> str:
    """The explicit re-key step (what the first keyed append does anyway)."""
    hs = hasher()
    newest = conn.audit_queries.head()  # over every partition
    last = conn.audit_queries.row(newest["id"]) if newest is not None else None
    part = (col(last, "part") or 0) if last is not None else 0
    conn.audit.lock_chain(part)
    if last is None or hs.scheme(last) != PLAIN:  # keyed or digest-chained already
        return "the audit chain is already keyed" if last is not None else "the audit log is empty"
    if _was_keyed(conn):
        return (
            "not re-keyed: this chain was keyed before and its tail is unkeyed now (re-hashed "
            "without the key); `audit --verify` shows where"
        )
    rid, _ = _upgrade(conn, hs, at, actor, part)
    row = conn.audit_queries.row(rid)
    assert row is not None  # appended just now, in this transaction
    return (
        f"audit chain keyed (row {rid})"
        if '"rekeyed"' in row["summary"]
        else f"audit chain keyed from row {rid}; the unkeyed rows before it were already broken"
    )


def head(conn: Connection) -> tuple[int, str]:
    """The last audit id and its hash, (0, GENESIS) when the log is empty: a forget case records it."""
    r = conn.audit_queries.head()
    return (int(r["id"]), r["hash"]) if r else (0, GENESIS)


def preview(text: str, n: int = 60) -> str:
    """A short preview of content for an audit summary (forget redacts these: engine/forget/delete.py)."""
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


def rewrite(conn: Connection, changes: dict[int, tuple[str, str]]) -> list[int]:
    """Replace (reason, summary) of the given rows inside the caller's transaction; the ids changed.
    Used only by forget, whose own audit row lists them. A DIGEST row (every row written since
    issue 24) is redacted in place: its chained hash covers its text's digest, so only the text and
    its keyed redaction mark change, never a hash (cost: the rows changed, not the log's length).
    A row of an older format (its hash covers its text) is re-chained as before: every row from the
    first such one, under the key. A row that was already broken keeps its old hash and link (its
    text is still redacted), so a redaction never launders an earlier tampering."""
    if not changes:
        return []
    hs = hasher()
    q = conn.audit_queries
    legacy: dict[int, tuple[str, str]] = {}
    for rid in sorted(changes):
        r = q.row(rid)
        if r is None:
            continue
        reason, summary = changes[rid]
        if col(r, "digest") is not None:
            if hs.text_state(r) is None:  # already edited by someone: the edit stays visible
                conn.audit.set_text(rid, reason, summary)
            else:
                conn.audit.redact(rid, reason, summary, hs.redaction(rid, reason, summary))
        else:
            legacy[rid] = changes[rid]
    if legacy:
        _rechain(conn, hs, legacy)
    return sorted(changes)


def _rechain(conn: Connection, hs: Hasher, changes: dict[int, tuple[str, str]]) -> None:
    """Older rows whose hash covers their text: new text, and every row from the first re-linked."""
    start = min(changes)
    q = conn.audit_queries
    pos = q.position  # ids may have gaps on PostgreSQL; positions never do
    first = q.row(start)
    part = (col(first, "part") or 0) if first is not None else 0
    before = q.before(start, part)
    old_prev = new_prev = before[1] if before else GENESIS
    prev_pos = before[0] if before else 0
    for r in q.rows_from(start):
        if (col(r, "part") or 0) != part:  # older rows are in one partition; the others chain apart
            continue
        reason, summary = changes.get(r["id"], (r["reason"], r["summary"]))
        sound = r[pos] == prev_pos + 1 and r["prev_hash"] == old_prev
        scheme = hs.scheme(r) if sound else None  # each row keeps its scheme (legacy prefix)
        if scheme == DIGEST:  # its text is not in its hash: only the link moves
            h = hs.of(DIGEST, new_prev, r)
            conn.audit.relink(r["id"], new_prev, h)
            _recent[h] = None
        elif scheme:
            h = hs.of(scheme, new_prev, r, reason, summary)
            conn.audit.set_text(r["id"], reason, summary, prev_hash=new_prev, hash=h)
        else:
            h = r["hash"]
            if r["id"] in changes:
                conn.audit.set_text(r["id"], reason, summary)
        old_prev, prev_pos, new_prev = r["hash"], r[pos], h
