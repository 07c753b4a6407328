"""The audit chain's head, anchored outside the database: `<state dir>/anchors/<database id>.json`
holds the last audit id, its hash, its identity and the row count. Deleting the tail of the log
(and even re-linking what is left) leaves the anchor pointing past the end, so `verify` reports the
truncation. Written 0600, atomically (temp file + rename inside a 0700 folder opened without
following symlinks), after each committed write, and only forward: several processes write one
database, so the move is decided under an flock on a lock file in the anchors folder (never on a
database file: closing a database descriptor would drop this process's SQLite locks)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.audit.hashing import Hasher, hasher
from engine.errors import EngineError
from engine.paths import state_dir
from engine.storage.audit import database_path

VERSION = 1
_SAFE_ID = re.compile(r"^[0-9A-Za-z_-]{1,64}$")
HEAD_SQL = "SELECT id, hash, at, actor, action, target_kind, target_id FROM audit ORDER BY id DESC LIMIT 1"


class AnchorError(EngineError):
    """The anchor folder or file cannot be used (or would have to move backwards)."""


def database_id(conn) -> str:
    """The database's own id (the `meta` row), else a hash of its absolute path. Never used as a
    file name unless it is plainly safe: the row is data anyone with write access can change."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'database_id'").fetchone()
    except Exception:  # noqa: BLE001 - an older file without a meta table
        row = None
    value = row[0] if row else None
    if isinstance(value, str) and _SAFE_ID.match(value):
        return value
    if isinstance(value, str) and value:
        return "id-" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    path = os.path.abspath(database_path(conn))
    return "path-" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def anchors_dir() -> Path:
    return state_dir() / "anchors"


def _open_dir(create: bool) -> int | None:
    d = anchors_dir()
    if create:
        d.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise AnchorError(f"{d}: cannot create the audit anchor folder ({exc.strerror})") from None
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AnchorError(f"{d}: the audit anchor folder is not a plain folder ({exc.strerror})") from None
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        os.close(fd)
        raise AnchorError(f"{d}: the audit anchor folder is writable by others; refusing to trust it")
    return fd


@contextmanager
def _folder(create: bool) -> Iterator[int | None]:
    fd = _open_dir(create)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _read(dfd: int, name: str) -> dict | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AnchorError(f"{anchors_dir() / name}: cannot read the audit anchor ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise AnchorError(f"{anchors_dir() / name}: the audit anchor is not a regular file")
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
            if len(data) > 1 << 20:
                raise AnchorError(f"{anchors_dir() / name}: the audit anchor is too large")
    finally:
        os.close(fd)
    try:
        rec = json.loads(data)
        if not (
            isinstance(rec, dict)
            and isinstance(rec.get("last_id"), int)
            and isinstance(rec.get("last_hash"), str)
        ):
            raise ValueError("missing fields")
    except ValueError as exc:
        raise AnchorError(f"{anchors_dir() / name}: the audit anchor is unreadable ({exc})") from None
    return rec


def _write(dfd: int, name: str, rec: dict) -> None:
    tmp = f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
    try:
        # No fsync: the database itself commits with synchronous=NORMAL, so an anchor made more
        # durable than the rows it names would only turn a power cut into a false "truncated".
        os.write(fd, json.dumps(rec, sort_keys=True).encode())
    except BaseException:
        os.close(fd)
        os.unlink(tmp, dir_fd=dfd)
        raise
    os.close(fd)
    # rename replaces a symlink planted at `name` itself; it never writes through it
    os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)


def read_anchor(conn) -> tuple[str, dict | None]:
    """(database id, its anchor record or None when there is none). AnchorError if unreadable."""
    dbid = database_id(conn)
    with _folder(create=False) as dfd:
        return dbid, (None if dfd is None else _read(dfd, f"{dbid}.json"))


def others_for_path(conn, dbid: str) -> list[dict]:
    """Anchors under another database id that name this file's path: when this database's own
    anchor is missing, one of them may be it (its id row changed) — or an older database there."""
    path, out = database_path(conn), list[dict]()
    with _folder(create=False) as dfd:
        if dfd is None or not path:
            return out
        for name in sorted(os.listdir(dfd))[:1000]:
            if name.endswith(".json") and name != f"{dbid}.json":
                try:
                    rec = _read(dfd, name)
                except AnchorError:
                    continue
                if rec and rec.get("path") == path:
                    out.append(rec)
    return out


def follows(hs: Hasher, anchor: dict, row) -> bool:
    """Is `row` (at the anchor's id) the row the anchor recorded? Same hash, or — after a forget
    re-linked the chain — same identity (id, time, actor, action, target)."""
    return row is not None and (
        row["hash"] == anchor["last_hash"] or hs.identity(row) == anchor.get("identity")
    )


def advance(conn, dbid: str, head, hs: Hasher) -> dict:
    """Move the anchor to `head` if it extends the anchored chain; return the anchor as it stands.
    Raises AnchorError (the anchor stays as evidence) when the log no longer reaches it."""
    with _folder(create=True) as dfd:
        if dfd is None:  # created just now, so only a race removing it gets here
            raise AnchorError(f"{anchors_dir()}: the audit anchor folder disappeared")
        lock = os.open(f"{dbid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            name = f"{dbid}.json"
            old = _read(dfd, name)
            # re-read the head under the lock: whoever holds it last has seen every commit before
            head = conn.execute(HEAD_SQL).fetchone() or head
            if old is not None:
                a_id = old["last_id"]
                if a_id > head["id"]:
                    raise AnchorError(
                        f"the audit log ends at row {head['id']} but is anchored at row "
                        f"{a_id}: it was truncated; the anchor stays"
                    )
                row = conn.execute("SELECT * FROM audit WHERE id = ?", (a_id,)).fetchone()
                if not follows(hs, old, row):
                    raise AnchorError(
                        f"audit row {a_id} is not the row anchored there: the log was "
                        "truncated or replaced; the anchor stays"
                    )
                if a_id == head["id"] and old["last_hash"] == head["hash"]:
                    return old
                rows = (
                    int(old.get("rows", 0))
                    + conn.execute(
                        "SELECT count(*) FROM audit WHERE id > ? AND id <= ?", (a_id, head["id"])
                    ).fetchone()[0]
                )
            else:  # bounded by the head read: another process may be committing right now
                rows = conn.execute("SELECT count(*) FROM audit WHERE id <= ?", (head["id"],)).fetchone()[0]
            rec = {
                "version": VERSION,
                "database_id": dbid,
                "path": database_path(conn),
                "last_id": head["id"],
                "last_hash": head["hash"],
                "identity": hs.identity(head),
                "rows": rows,
                "anchored_at": time.time(),
            }
            _write(dfd, name, rec)
            return rec
        finally:
            os.close(lock)


def anchor_hook():
    """A `Store.after_commit` hook: after each committed write, if the audit head moved, move the
    anchor. One indexed read per write when nothing was appended."""
    seen: dict = {}

    def audit_anchor(conn) -> None:
        head = conn.execute(HEAD_SQL).fetchone()
        if head is None or seen.get("head") == (head["id"], head["hash"]):
            return
        dbid = database_id(conn)
        rec = advance(conn, dbid, head, hasher())
        seen["head"] = (rec["last_id"], rec["last_hash"])

    return audit_anchor
