"""Verifying the audit chain: every row's keyed hash and link, the ids without gaps, and the head
against its anchor outside the database (audit_anchor). What it proves: see README "What the audit
chain proves"."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.audit.anchor import AnchorError, anchors_dir, follows, others_for_path, read_anchor
from engine.audit.hashing import GENESIS, KEYED, KEYED_FROM, PLAIN, Hasher, hasher
from engine.clock import iso
from engine.keys import key_file


@dataclass
class ChainCheck:
    ok: bool
    rows: int
    first_bad_id: int | None = None  # the first row whose hash or link does not hold
    message: str = ""
    problems: list[str] = field(default_factory=list)
    keyed: bool = False  # rows are HMAC-keyed (after any legacy prefix)
    legacy_rows: int = 0  # unkeyed sha256 rows from an older memconsole (a prefix)
    head_id: int = 0
    # ok | behind | rewritten (forget re-linked it) | missing | unreadable | truncated | replaced
    anchor: str = "none"
    anchor_detail: str = ""
    truncated_after: int | None = None  # the log ends here but was anchored further
    anchor_file: str = ""
    anchored: list = field(default_factory=list)  # [last id, last hash, rows] as anchored


@dataclass
class _Walk:
    n: int = 0
    last_id: int = 0
    last_hash: str = GENESIS
    keyed: int = 0
    plain: int = 0
    links_ok: bool = True
    first_bad: int | None = None
    problems: list[str] = field(default_factory=list)

    def bad(self, rid: int, what: str, limit: int) -> None:
        self.first_bad = self.first_bad or rid
        if len(self.problems) < limit:
            self.problems.append(f"row {rid}: {what}")


def keyed_from(conn) -> int | None:
    """The first id the chain was keyed from (a meta row written when keying began): rows from
    there on must be keyed even when none is (a whole chain re-hashed without the key)."""
    try:
        r = conn.execute("SELECT value FROM meta WHERE key = ?", (KEYED_FROM,)).fetchone()
        return int(r[0]) if r else None
    except (ValueError, TypeError, Exception):  # noqa: BLE001 - a damaged row: the anchor still holds
        return None


def walk(conn, hs: Hasher, limit: int = 20, *, allow_keyed: bool = True) -> _Walk:
    """Every row in id order. Plain rows are accepted only before the first keyed one (a keyed row
    covers its predecessor's hash, so it pins the unkeyed prefix as it was when keying began)."""
    w = _Walk()
    since = keyed_from(conn) if allow_keyed else None
    for r in conn.execute("SELECT * FROM audit ORDER BY id"):
        w.n += 1
        rid = r["id"]
        if rid < w.last_id + 1:
            w.bad(rid, "an id outside the sequence (inserted)", limit)
        elif rid > w.last_id + 1:
            lo, hi = w.last_id + 1, rid - 1
            gone = f"rows {lo}-{hi} are" if hi > lo else f"row {lo} is"
            w.bad(rid, f"link does not match the row before it ({gone} missing: deleted)", limit)
        elif r["prev_hash"] != w.last_hash:
            w.links_ok = False
            w.bad(rid, "link does not match the row before it", limit)
        scheme = hs.scheme(r)
        if scheme == KEYED and allow_keyed:
            w.keyed += 1
        elif scheme == PLAIN and not w.keyed and (since is None or rid < since):
            w.plain += 1
        else:
            w.bad(
                rid,
                "content does not match its hash"
                if scheme is None
                else "an unkeyed hash in a keyed chain (re-hashed without the key)",
                limit,
            )
        w.last_id, w.last_hash = rid, r["hash"]
    return w


def _anchor(conn, hs: Hasher, chk: ChainCheck, w: _Walk) -> None:
    try:
        dbid, rec = read_anchor(conn)
    except AnchorError as exc:
        chk.anchor, chk.anchor_detail = "unreadable", f"{exc}: a truncated tail cannot be ruled out"
        return
    if rec is None:
        if w.n:
            chk.anchor = "missing"
            chk.anchor_detail = (
                f"no head anchor for this database ({anchors_dir() / (dbid + '.json')}): "
                "a truncated tail cannot be ruled out"
            )
            for other in others_for_path(conn, dbid)[:3]:
                chk.anchor_detail += (
                    f"; an anchor for this path exists under database id "
                    f"{other.get('database_id')} (row {other['last_id']}): another "
                    "database that was here, or this one's id was changed"
                )
        return
    a_id = rec["last_id"]
    chk.anchor_file = str(anchors_dir() / f"{dbid}.json")
    chk.anchored = [a_id, rec["last_hash"], rec.get("rows")]
    when = f"anchored at row {a_id} on {iso(float(rec.get('anchored_at') or 0))}"
    if a_id > w.last_id:
        chk.anchor, chk.truncated_after = "truncated", w.last_id
        chk.anchor_detail = f"the audit log was truncated after row {w.last_id} ({when})"
        return
    row = conn.execute("SELECT * FROM audit WHERE id = ?", (a_id,)).fetchone()
    if row is not None and row["hash"] == rec["last_hash"]:
        chk.anchor = "ok" if a_id == w.last_id else "behind"
        chk.anchor_detail = when + ("" if a_id == w.last_id else f"; {w.last_id - a_id} rows after it")
    elif follows(hs, rec, row) and not w.problems and w.keyed:
        chk.anchor, chk.anchor_detail = "rewritten", f"{when}; re-linked since by a forget's redaction"
    else:
        chk.anchor = "replaced" if row is not None else "truncated"
        chk.truncated_after = a_id - 1 if row is None else None
        chk.anchor_detail = (
            f"audit row {a_id} is {'missing' if row is None else 'not the row anchored'}"
            f" ({when}): the log was truncated or replaced"
        )


def verify_chain(conn, *, limit_problems: int = 20) -> ChainCheck:
    """Recompute every row's hash and link; compare the head with its anchor. A changed, inserted
    or deleted row, or a truncated tail, shows as a failure. (Forget's redaction re-chains on
    purpose, under the key, and says so in its own audit row.)"""
    hs = hasher()
    w = walk(conn, hs, limit_problems)
    chk = ChainCheck(
        not w.problems,
        w.n,
        w.first_bad,
        problems=w.problems,
        keyed=w.keyed > 0,
        legacy_rows=w.plain,
        head_id=w.last_id,
    )
    _anchor(conn, hs, chk, w)
    if chk.anchor in ("truncated", "replaced"):
        chk.ok = False
        a_id, a_hash, a_rows = chk.anchored
        chk.problems.append(
            f"anchor: {chk.anchor_file} records row {a_id} (hash {a_hash[:16]}..., "
            f"{a_rows} rows); the log now ends at row {w.last_id} ({w.n} rows)"
        )
    kind = (
        ("keyed" if not w.plain else f"keyed; the first {w.plain} unkeyed from an older version")
        if w.keyed
        else ("unkeyed sha256 from an older version: keyed on the next write" if w.plain else "")
    )
    if w.problems and not w.keyed and not w.plain and w.links_ok and w.n > 1:
        chk.problems.insert(
            0,
            f"no row verifies under this installation's key ({key_file()}): the "
            "chain was keyed elsewhere (a moved database or a new key file) or rewritten",
        )
    if chk.ok:
        chk.message = f"audit chain intact ({w.n} rows{', ' + kind if kind else ''})"
        if chk.anchor_detail:
            chk.message += f"; {chk.anchor_detail}"
    elif w.first_bad is not None:
        chk.message = f"audit chain broken at row {w.first_bad}"
        if chk.anchor in ("truncated", "replaced"):
            chk.message += f"; {chk.anchor_detail}"
    else:
        chk.message = chk.anchor_detail
    return chk
