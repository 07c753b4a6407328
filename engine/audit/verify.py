"""Verifying the audit chain: every row's keyed hash and link, the chain's positions without gaps,
and the head against its anchor outside the database (audit_anchor), which also says where keyed
hashing began and which database was anchored at this place. What it proves: see README "What
memconsole promises"."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.audit import anchor_heads
from engine.audit.anchor import (
    AnchorError,
    KeyedElsewhere,
    anchor_of,
    anchors_dir,
    follows,
    others_for_path,
    read_anchor,
    read_place,
)
from engine.audit.hashing import DIGEST, GENESIS, KEYED, PLAIN, Hasher, hasher, keyed_from
from engine.audit.partitions import HeadsCheck
from engine.clock import iso
from engine.keys import key_file
from engine.storage.port import Connection

__all__ = ["ChainCheck", "keyed_from", "verify_chain", "walk", "walk_all"]

_META = object()  # walk(): read the keyed-from row from the database


@dataclass
class ChainCheck:
    ok: bool
    rows: int
    first_bad_id: int | None = None  # the first row whose hash or link does not hold
    message: str = ""
    problems: list[str] = field(default_factory=list)
    keyed: bool = False  # rows are HMAC-keyed (after any legacy prefix)
    legacy_rows: int = 0  # unkeyed sha256 rows from an older memconsole (a prefix)
    redacted_rows: int = 0  # digest-chained rows whose text a forget redacted (keyed mark holds)
    head_id: int = 0
    # ok | behind | rewritten (forget re-linked it) | missing | unreadable | truncated | replaced
    # | identity-changed | keyed-elsewhere
    anchor: str = "none"
    anchor_detail: str = ""
    truncated_after: int | None = None  # the log ends here but was anchored further
    anchor_file: str = ""
    anchored: list = field(default_factory=list)  # [last id, last hash, rows] as anchored


@dataclass
class _Walk:
    n: int = 0
    last_id: int = 0
    last_pos: int = 0
    last_hash: str = GENESIS
    keyed: int = 0
    plain: int = 0
    redacted: int = 0
    links_ok: bool = True
    first_bad: int | None = None
    problems: list[str] = field(default_factory=list)
    foreign: list[int] = field(default_factory=list)  # a run of linked rows no scheme reproduces
    keyed_before: bool = False  # a row verified under this key before the run began

    def bad(self, rid: int, what: str, limit: int) -> None:
        self.first_bad = self.first_bad or rid
        if len(self.problems) < limit:
            self.problems.append(f"row {rid}: {what}")

    def end_run(self, limit: int) -> None:
        """A run of two or more linked rows that verify under neither scheme, with no row this key
        verifies before it, is one finding (keyed with another key), not one "content does not
        match" per row; among rows this key verifies, each is an edit."""
        run, self.foreign = self.foreign, []
        if len(run) == 1 or (run and self.keyed_before):  # edits among rows this key verifies
            for rid in run:
                self.bad(rid, "content does not match its hash", limit)
        elif run:
            self.first_bad = self.first_bad or run[0]
            if len(self.problems) < limit:
                self.problems.append(
                    f"rows {run[0]}-{run[-1]} ({len(run)} rows): keyed elsewhere (with another "
                    f"installation key): none verifies under {key_file()}"
                )


def walk(
    conn: Connection,
    hs: Hasher,
    limit: int = 20,
    *,
    allow_keyed: bool = True,
    since=_META,
    part: int = 0,
    heads: HeadsCheck | None = None,
) -> _Walk:
    """Every row of chain `part` in chain order. Plain rows are accepted only before the first
    keyed one (a keyed row covers its predecessor's hash, so it pins the unkeyed prefix as it was
    when keying began) and before `since`, where keying began (the anchor's record when there is
    one). `heads`: the rows heads records bound, checked as they pass."""
    w = _Walk()
    if not allow_keyed:
        since = None
    elif since is _META:
        since = keyed_from(conn)
    pos = conn.audit_queries.chain_position(part)
    for r in conn.audit_queries.chain(part):
        w.n += 1
        rid, at = r["id"], r[pos]
        linked = True
        if at is None or at < w.last_pos + 1 or rid <= w.last_id:
            w.end_run(limit)
            w.bad(rid, "an id outside the sequence (inserted)", limit)
            linked = False
        elif at > w.last_pos + 1:
            w.end_run(limit)
            lo, hi = w.last_pos + 1, at - 1
            gone = f"positions {lo}-{hi} are" if hi > lo else f"position {lo} is"
            if pos == "id":
                gone = gone.replace("positions", "rows").replace("position", "row")
            where = f", in partition {part}" if part else ""
            w.bad(rid, f"link does not match the row before it ({gone} missing: deleted{where})", limit)
            linked = False
        elif r["prev_hash"] != w.last_hash:
            w.end_run(limit)
            w.links_ok = False
            w.bad(rid, "link does not match the row before it", limit)
            linked = False
        scheme = hs.scheme(r)
        if scheme == DIGEST and allow_keyed:
            w.end_run(limit)
            w.keyed += 1
            text = hs.text_state(r)  # the chain covers the text's digest; the text is checked here
            if text is None:
                w.bad(rid, "content does not match its hash", limit)
            elif text == "redacted":
                w.redacted += 1
        elif scheme == KEYED and allow_keyed:
            w.end_run(limit)
            w.keyed += 1
        elif scheme == PLAIN and not w.keyed and (since is None or rid < since):
            w.end_run(limit)
            w.plain += 1
        elif scheme is None and linked:
            if not w.foreign:
                w.keyed_before = w.keyed > 0
            w.foreign.append(rid)
        else:
            w.end_run(limit)
            w.bad(
                rid,
                "content does not match its hash"
                if scheme is None
                else "an unkeyed hash in a keyed chain (re-hashed without the key)",
                limit,
            )
        if heads is not None and at is not None:
            heads.row(part, at, r)
        w.last_id, w.last_pos, w.last_hash = rid, at if at is not None else w.last_pos, r["hash"]
    w.end_run(limit)
    return w


def walk_all(conn: Connection, hs: Hasher, limit: int = 20, *, since=_META) -> _Walk:
    """Every partition's chain (one on SQLite), then what the heads records bound: one walk's
    totals (rows, keyed, the last id over all), every partition's problems."""
    parts = conn.audit_queries.partitions() or [0]
    heads = HeadsCheck.of(conn.audit_queries.heads_records()) if len(parts) > 1 else None
    total = _Walk()
    for part in parts:
        w = walk(conn, hs, limit, since=since, part=part, heads=heads)
        total.n += w.n
        total.keyed += w.keyed
        total.plain += w.plain
        total.redacted += w.redacted
        total.links_ok = total.links_ok and w.links_ok
        if w.last_id > total.last_id:
            total.last_id, total.last_pos, total.last_hash = w.last_id, w.last_pos, w.last_hash
        if w.first_bad is not None and (total.first_bad is None or w.first_bad < total.first_bad):
            total.first_bad = w.first_bad
        total.problems += w.problems[: max(0, limit - len(total.problems))]
    if heads is not None:
        found = heads.finish()
        total.problems += found[: max(0, limit - len(total.problems))]
        if found and total.first_bad is None:
            total.first_bad = min(rec for recs in heads.want.values() for rec, _ in recs)
    return total


@dataclass
class _View:
    """The anchor a chain is held against, and what decided it."""

    dbid: str = ""
    rec: dict | None = None
    file: str = ""
    changed_from: str | None = None  # the id this place was anchored under, when it changed
    place: str = ""
    error: str = ""
    elsewhere: bool = False


def _view(conn: Connection) -> _View:
    v = _View()
    try:
        v.dbid, v.rec = read_anchor(conn)
        v.file = str(anchors_dir() / f"{v.dbid}.json")
        pl = read_place(conn)
        old = pl.changed_from(v.dbid) if pl else None
        if pl is not None and old is not None:
            v.changed_from, v.place = old, pl.place
            v.file = str(anchors_dir() / f"{old}.json")
            v.rec = anchor_of(old)  # the chain is held against the anchor made for this place
    except KeyedElsewhere as exc:
        v.error, v.elsewhere = str(exc), True
    except AnchorError as exc:
        v.error = f"{exc}: a truncated tail cannot be ruled out"
    return v


def _since(conn: Connection, v: _View):
    if v.rec is not None and int(v.rec.get("version") or 1) >= 2:
        return v.rec.get("keyed_from")
    return _META


def _anchor(conn: Connection, hs: Hasher, chk: ChainCheck, w: _Walk, v: _View) -> None:
    if v.error:
        chk.anchor = "keyed-elsewhere" if v.elsewhere else "unreadable"
        chk.anchor_detail = v.error
        return
    rec = v.rec
    if v.changed_from is not None:
        chk.anchor = "identity-changed"
        chk.anchor_detail = (
            f"this database's identity changed: {v.place} was anchored as database {v.changed_from} "
            f"({v.file}{', row ' + str(rec['last_id']) if rec else ''}) and now says {v.dbid}"
        )
    if rec is None:
        if w.n and v.changed_from is None:
            chk.anchor = "missing"
            chk.anchor_detail = (
                f"no head anchor for this database ({v.file}): a truncated tail cannot be ruled out"
            )
            for other in others_for_path(conn, v.dbid)[:3]:
                chk.anchor_detail += (
                    f"; an anchor for this path exists under database id "
                    f"{other.get('database_id')} (row {other['last_id']}): another "
                    "database that was here, or this one's id was changed"
                )
        return
    a_id = rec["last_id"]
    chk.anchor_file = v.file
    chk.anchored = [a_id, rec["last_hash"], rec.get("rows")]
    when = f"anchored at row {a_id} on {iso(float(rec.get('anchored_at') or 0))}"
    state, detail = "", ""
    if a_id > w.last_id:
        state, chk.truncated_after = "truncated", w.last_id
        detail = f"the audit log was truncated after row {w.last_id} ({when})"
    else:
        row = conn.audit_queries.row(a_id)
        if row is not None and row["hash"] == rec["last_hash"]:
            state = "ok" if a_id == w.last_id else "behind"
            detail = when + ("" if a_id == w.last_id else f"; {w.last_id - a_id} rows after it")
        elif follows(hs, rec, row) and not w.problems and w.keyed:
            state, detail = "rewritten", f"{when}; re-linked since by a forget's redaction"
        else:
            state = "replaced" if row is not None else "truncated"
            chk.truncated_after = a_id - 1 if row is None else None
            detail = (
                f"audit row {a_id} is {'missing' if row is None else 'not the row anchored'}"
                f" ({when}): the log was truncated or replaced"
            )
    if state in ("truncated", "replaced"):
        chk.problems.append(
            f"anchor: {v.file} records row {a_id} (hash {rec['last_hash'][:16]}..., "
            f"{rec.get('rows')} rows); the log now ends at row {w.last_id} ({w.n} rows)"
        )
    cut = _partitions_cut(conn, hs, rec)
    chk.problems += cut
    if cut and state in ("ok", "behind", "rewritten"):  # the log's head holds; a partition's does not
        state = "truncated" if "cut back:" in cut[0] else "replaced"
        detail = f"{cut[0]} ({when})"
    if v.changed_from is None:
        chk.anchor, chk.anchor_detail = state, detail
    elif state in ("truncated", "replaced"):  # the identity line leads; then what befell the chain
        chk.anchor_detail += f"; {detail}"
    if int(rec.get("version") or 1) >= 2 and keyed_from(conn) != rec.get("keyed_from"):
        what = keyed_from(conn)
        chk.problems.append(
            f"the audit_keyed_from row {'is missing' if what is None else f'says {what}'} but the anchor "
            f"records the chain as keyed from row {rec.get('keyed_from')}: it was changed or deleted"
        )


def _partitions_cut(conn: Connection, hs: Hasher, rec: dict) -> list[str]:
    """Each partition still reaches the head the anchor recorded for it (anchor_heads.py)."""
    held = anchor_heads.anchored(rec)
    if not held:
        return []
    q = conn.audit_queries
    _, at_rows = q.partition_heads(anchor_heads.positions(held))
    return anchor_heads.problems(hs, held, at_rows, q.position)


def verify_chain(conn: Connection, *, limit_problems: int = 20) -> ChainCheck:
    """Recompute every row's hash and link; compare the head with its anchor. A changed, inserted
    or deleted row, a truncated tail, a chain re-hashed without the key, a deleted keyed-from row
    or a changed database identity shows as a failure. (Forget's redaction re-chains on purpose,
    under the key, and says so in its own audit row; rows chained over their text's digest are
    redacted in place with a keyed mark instead, never re-hashed.)"""
    hs = hasher()
    v = _view(conn)
    w = walk_all(conn, hs, limit_problems, since=_since(conn, v))
    chk = ChainCheck(
        not w.problems,
        w.n,
        w.first_bad,
        problems=w.problems,
        keyed=w.keyed > 0,
        legacy_rows=w.plain,
        redacted_rows=w.redacted,
        head_id=w.last_id,
    )
    _anchor(conn, hs, chk, w, v)
    if chk.anchor in ("truncated", "replaced", "identity-changed", "keyed-elsewhere"):
        chk.ok = False
    if chk.anchor in ("identity-changed", "keyed-elsewhere"):
        chk.problems.insert(0, chk.anchor_detail)
    chk.ok = chk.ok and not chk.problems
    kind = (
        ("keyed" if not w.plain else f"keyed; the first {w.plain} unkeyed from an older version")
        if w.keyed
        else ("unkeyed sha256 from an older version: keyed on the next write" if w.plain else "")
    )
    if chk.ok:
        red = f", {w.redacted} redacted by forget" if w.redacted else ""
        chk.message = f"audit chain intact ({w.n} rows{', ' + kind if kind else ''}{red})"
        if chk.anchor_detail:
            chk.message += f"; {chk.anchor_detail}"
    elif chk.anchor == "identity-changed":  # the detail (place, old anchor) is problems[0]
        chk.message = (
            f"audit chain not trusted: this database's identity changed from {v.changed_from} to {v.dbid}"
        )
    elif chk.anchor == "keyed-elsewhere":
        chk.message = f"audit chain keyed elsewhere (with another installation key); this one is {key_file()}"
    elif w.first_bad is not None:
        chk.message = f"audit chain broken at row {w.first_bad}"
        if chk.anchor in ("truncated", "replaced"):
            chk.message += f"; {chk.anchor_detail}"
    elif chk.anchor in ("truncated", "replaced", "unreadable"):
        chk.message = chk.anchor_detail
    else:
        chk.message = chk.problems[0] if chk.problems else chk.anchor_detail
    return chk
