"""The audit chain's head, anchored outside the database: `<state dir>/anchors/<database id>.json`
holds the last audit id, its hash, its identity, the row count and where keyed hashing began
(`keyed_from`), sealed with an HMAC under the installation key. Deleting the tail of the log (and
even re-linking what is left) leaves the anchor pointing past the end, so `verify` reports the
truncation; re-hashing the chain without the key, or deleting the `audit_keyed_from` row, meets the
anchored `keyed_from`.

The database id is a `meta` row anyone who writes the database can change, so it never decides
alone: a place record (`anchors/places/<keyed hash of the place>.json`) binds the place (a file's
path, a server database's address) and instance (inode, oid) to the id anchored there; a database
there under another id has a changed identity, reported with the old anchor, never anchored anew.

Written after each committed write, only forward: several processes write one database, so the
move is decided under an flock on a lock file in the anchors folder (never on a database file:
closing a database descriptor would drop this process's SQLite locks)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import time
from contextlib import suppress
from dataclasses import dataclass, replace

from engine.audit import anchor_heads
from engine.audit.anchor_files import (
    AnchorError,
    KeyedElsewhere,
    anchors_dir,
    check_seal,
    folder,
    place_name,
    read_json,
    seal,
    write_json,
)
from engine.audit.anchor_queue import COVERS, boot_id, covered
from engine.audit.hashing import Hasher, hasher, is_keyed
from engine.storage.port import Connection
from engine.storage.queries.audit_anchor import AnchorView

__all__ = [
    "AnchorError",
    "KeyedElsewhere",
    "Place",
    "advance",
    "anchor_hook",
    "anchor_of",
    "anchored_here",
    "anchors_dir",
    "database_id",
    "follows",
    "forget_place",
    "others_for_path",
    "read_anchor",
    "read_place",
]

VERSION = 2  # 2: sealed, with keyed_from, place and instance
_SAFE_ID = re.compile(r"^[0-9A-Za-z_-]{1,64}$")


_ASK = object()


def database_id(conn: Connection, value=_ASK) -> str:
    """The database's own id (the `meta` row; `value`: that row as already read), else a hash of
    its absolute path. Never used as a file name unless it is plainly safe: the row is data anyone
    with write access can change."""
    if value is _ASK:
        try:
            value = conn.audit_queries.meta_value("database_id")
        except Exception:  # noqa: BLE001 - an older file without a meta table
            value = None
    if isinstance(value, str) and _SAFE_ID.match(value):
        return value
    if isinstance(value, str) and value:
        return "id-" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    path = os.path.abspath(conn.audit_queries.database_path())
    return "path-" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _anchor(dfd: int, name: str) -> dict | None:
    shown = anchors_dir() / name
    rec = read_json(dfd, name, shown)
    if rec is None:
        return None
    if not (isinstance(rec.get("last_id"), int) and isinstance(rec.get("last_hash"), str)):
        raise AnchorError(f"{shown}: the audit anchor is unreadable (missing fields)")
    return check_seal(rec, shown)


def anchor_of(dbid: str) -> dict | None:
    """The anchor recorded for database id `dbid` (None when there is none)."""
    with folder(create=False) as dfd:
        return None if dfd is None else _anchor(dfd, f"{dbid}.json")


def read_anchor(conn: Connection) -> tuple[str, dict | None]:
    """(database id, its anchor record or None when there is none). AnchorError if unreadable,
    KeyedElsewhere if its seal does not verify under this installation's key."""
    dbid = database_id(conn)
    return dbid, anchor_of(dbid)


@dataclass
class Place:
    place: str
    instance: str
    record: dict | None  # the place record: the database id anchored at this place

    def changed_from(self, dbid: str) -> str | None:
        """The id anchored at this place and instance when the database now says another one."""
        r = self.record
        if r and r.get("instance") == self.instance and r.get("database_id") != dbid:
            return str(r.get("database_id"))
        return None


def read_place(conn: Connection, got=_ASK) -> Place | None:
    if got is _ASK:  # else: (place, instance) as already read with the head (AnchorView)
        got = conn.audit_queries.database_place()
    if got is None:
        return None
    name = place_name(got[0])
    with folder(create=False, sub="places") as dfd:
        rec = None if dfd is None else read_json(dfd, name, anchors_dir() / "places" / name)
    place, instance = got
    return Place(place, instance, None if rec is None else check_seal(rec, anchors_dir() / "places" / name))


def forget_place(conn: Connection) -> None:
    """Drop the place record of the database `conn` is on: what making a database anew there
    means to the installation (test harnesses that empty a server database in place)."""
    got = conn.audit_queries.database_place()
    if got is not None:
        with folder(create=False, sub="places") as dfd:
            if dfd is not None:
                with suppress(FileNotFoundError):
                    os.unlink(place_name(got[0]), dir_fd=dfd)


def anchored_here(conn: Connection) -> bool:
    """Has this installation anchored a chain for this database (its id, or its place and
    instance)? Then an unkeyed chain is someone's re-hash, never an older version's log."""
    try:
        if read_anchor(conn)[1] is not None:
            return True
        pl = read_place(conn)
    except AnchorError:
        return True
    return pl is not None and pl.record is not None and pl.record.get("instance") == pl.instance


def others_for_path(conn: Connection, dbid: str) -> list[dict]:
    """Anchors under another database id that name this file's path: when this database's own
    anchor is missing, one of them may be it (its id row changed) — or an older database there."""
    path, out = conn.audit_queries.database_path(), list[dict]()
    with folder(create=False) as dfd:
        if dfd is None or not path:
            return out
        for name in sorted(os.listdir(dfd))[:1000]:
            if name.endswith(".json") and name != f"{dbid}.json":
                try:
                    rec = _anchor(dfd, name)
                except AnchorError:
                    continue
                if rec and rec.get("path") == path:
                    out.append(rec)
    return out


def follows(hs: Hasher, anchor: dict, row) -> bool:
    """Is `row` (at the anchor's id) the row the anchor recorded? Same hash, or — after a forget
    re-linked the chain under the key — same identity (id, time, actor, action, target) and a
    keyed hash (a row re-hashed without the key keeps its identity but is no longer keyed)."""
    return row is not None and (
        row["hash"] == anchor["last_hash"]
        or (hs.identity(row) == anchor.get("identity") and is_keyed(hs.scheme(row)))
    )


def _check_place(conn: Connection, dbid: str, got=_ASK) -> Place | None:
    pl = read_place(conn, got)
    old = pl.changed_from(dbid) if pl else None
    if pl is not None and old is not None:
        raise AnchorError(
            f"this database's identity changed: {pl.place} was anchored as database {old} "
            f"({anchors_dir() / (old + '.json')}) and now says {dbid}; the anchor stays"
        )
    return pl


def _record_place(pl: Place | None, dbid: str) -> None:
    if pl is None or (pl.record is not None and pl.record.get("instance") == pl.instance):
        return
    rec = {"version": 1, "place": pl.place, "instance": pl.instance, "database_id": dbid, "at": time.time()}
    with folder(create=True, sub="places") as dfd:
        if dfd is not None:
            write_json(dfd, place_name(pl.place), seal(rec))


def _keyed_from(view: AnchorView) -> int | None:
    """hashing.keyed_from over the row as the view read it (a damaged row: None; the anchor holds)."""
    try:
        return int(view.keyed_from) if view.keyed_from is not None else None
    except (ValueError, TypeError):
        return None


def _check_old(conn: Connection, hs: Hasher, old: dict, view: AnchorView, known: list | tuple = ()) -> None:
    a_id, head = old["last_id"], view.head
    assert head is not None  # advance() passes the head it anchors
    if a_id > head["id"]:
        raise AnchorError(
            f"the audit log ends at row {head['id']} but is anchored at row {a_id}: it was truncated;"
            " the anchor stays"
        )
    # the same stored hash is the anchored row; else (a redaction re-linked it, or an edit) the
    # whole row decides, as before — taken from the partitions' rows just read when it is one
    if view.after_id != a_id or view.after_hash != old["last_hash"]:
        row = next((r for r in known if r["id"] == a_id), None) or conn.audit_queries.row(a_id)
        if not follows(hs, old, row):
            raise AnchorError(
                f"audit row {a_id} is not the row anchored there: the log was truncated or replaced;"
                " the anchor stays"
            )
    if old.get("version", 1) >= 2 and _keyed_from(view) != old.get("keyed_from"):
        raise AnchorError(
            f"the audit_keyed_from row says {_keyed_from(view)} but the chain is anchored as keyed from "
            f"row {old.get('keyed_from')}: it was changed or deleted; the anchor stays"
        )


def advance(
    conn: Connection,
    dbid: str,
    head,
    hs: Hasher,
    view: AnchorView | None = None,
    asked: float | None = None,
    view_at: float | None = None,
    expect_id: bool = False,
) -> dict:
    """Move the anchor to `head` if it extends the anchored chain; return the anchor as it stands.
    Raises AnchorError (the anchor stays as evidence) when the log no longer reaches it, its
    keyed-from row changed, or this place was anchored under another database id. `view`: what
    was read with `head` (AnchorView); asked anew under the lock unless it was read from the row
    anchored now (this process anchored last: nothing moved the anchor since, so its head is
    not behind it). `expect_id`: `dbid` is as this process read it before (no view now): the
    read under the lock checks it still is (_OtherId when not)."""
    with folder(create=True) as dfd:
        if dfd is None:  # created just now, so only a race removing it gets here
            raise AnchorError(f"{anchors_dir()}: the audit anchor folder disappeared")
        lock = os.open(f"{dbid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
        try:
            asked = time.monotonic() if asked is None else asked  # this process's commit is done
            fcntl.flock(lock, fcntl.LOCK_EX)
            name = f"{dbid}.json"
            old = _anchor(dfd, name)
            if covered(old, asked, VERSION):
                assert old is not None
                return old
            read_at, fresh = time.monotonic(), False
            a_id = None if old is None else old["last_id"]
            # every partition's head too (anchor_heads.py): the rows at the anchored positions
            # and the newest of each, in one read under the same lock
            q, held = conn.audit_queries, anchor_heads.anchored(old)
            at = anchor_heads.positions(held)
            if view is None or view.head is None or old is None or view.after_id != a_id:
                # re-read under the lock: whoever holds it last has seen every commit before
                # (the view and the heads in one read: one statement on PostgreSQL)
                view, head_rows, at_rows = q.anchor_read(a_id, at)
                fresh = True
                if expect_id and database_id(conn, view.database_id) != dbid:
                    raise _OtherId(view)  # the id row changed since this process last read it
            else:
                head_rows, at_rows = q.partition_heads(at)
            pl = _check_place(conn, dbid, view.place)  # identity and place: compared every write
            heads = anchor_heads.moved(hs, held, head_rows, q.position)
            # the log's head: the newest of what was read (partitioned: the newest partition
            # head, read under the lock; within one partition, ids follow positions)
            found = [r for r in (view.head, *head_rows, head) if r is not None]
            if not found:  # nothing to anchor (the rows written were rolled back to a savepoint)
                return old or {}
            head = max(found, key=lambda r: r["id"])
            if old is not None:
                _check_old(conn, hs, old, replace(view, head=head), at_rows)
                cut = anchor_heads.problems(hs, held, at_rows, q.position)
                if cut:
                    raise AnchorError(f"{cut[0]}; the anchor stays")
                if (
                    old["last_id"] == head["id"]
                    and old["last_hash"] == head["hash"]
                    and old.get("version") == VERSION
                    and heads == (old.get(anchor_heads.HEADS) or {})
                ):
                    _record_place(pl, dbid)
                    return old
                if view.count is None or view.head is not head:
                    after = conn.audit_queries.count(after=old["last_id"], through=head["id"])
                else:
                    after = view.count
                rows = int(old.get("rows", 0)) + after
                # a version-1 anchor takes the keyed-from row as it stands now, once
                since = old.get("keyed_from") if old.get("version", 1) >= 2 else _keyed_from(view)
            else:  # bounded by the head read: another process may be committing right now
                rows = conn.audit_queries.count(through=head["id"])
                since = _keyed_from(view)
            rec = {
                "version": VERSION,
                "database_id": dbid,
                "path": conn.audit_queries.database_path(),
                "place": pl.place if pl else "",
                "instance": pl.instance if pl else "",
                "last_id": head["id"],
                "last_hash": head["hash"],
                "identity": hs.identity(head),
                "rows": rows,
                "keyed_from": since,
                "anchored_at": time.time(),
            }
            if heads:  # partitioned (PostgreSQL); one chain's head is `last_id` itself
                rec[anchor_heads.HEADS] = heads
            # what the head covers: read under the lock (after read_at), or the view read after
            # view_at (monotonic, taken by the hook before it)
            seen_from = read_at if (fresh or head_rows) else view_at
            if seen_from is not None and boot_id():
                rec[COVERS] = [boot_id(), float(seen_from)]
            rec = seal(rec)
            write_json(dfd, name, rec)
            _record_place(pl, dbid)
            return rec
        finally:
            os.close(lock)


class _OtherId(Exception):
    """The database id read under the lock is not the one the lock was taken for."""

    def __init__(self, view: AnchorView) -> None:
        super().__init__("the database id changed")
        self.view = view


def anchor_hook():
    """A `Store.after_commit` hook: after each committed write, if the audit head moved, move the
    anchor. One indexed read per write when nothing was appended; where the store tells whether
    the write appended (PostgreSQL), none after a write that did not, and after one that did only
    the read under the anchor's lock (none when another process's move already covered it)."""
    seen: dict = {}

    def audit_anchor(conn: Connection) -> None:
        wrote = conn.audit.wrote
        if wrote is False:  # no audit row: this write did not move the head
            return
        if wrote and "dbid" in seen:  # it moved the head: no read before the lock
            try:
                rec = advance(conn, seen["dbid"], None, hasher(), expect_id=True)
            except _OtherId as moved:  # decided under the id it says now (its place checks it)
                seen["dbid"] = database_id(conn, moved.view.database_id)
                rec = advance(conn, seen["dbid"], moved.view.head, hasher(), moved.view)
            if rec:
                seen["head"] = (rec["last_id"], rec["last_hash"])
            return
        # one read (one statement on PostgreSQL): the head, the id and place to check, and the
        # row this process anchored last with the rows after it
        view_at = time.monotonic()  # the view below sees every commit before this
        view = conn.audit_queries.anchor_view(seen["head"][0] if "head" in seen else None)
        head = view.head
        if head is None or seen.get("head") == (head["id"], head["hash"]):
            return
        dbid = seen["dbid"] = database_id(conn, view.database_id)
        rec = advance(conn, dbid, head, hasher(), view, view_at=view_at)
        seen["head"] = (rec["last_id"], rec["last_hash"])

    return audit_anchor
