"""The files that anchor the audit chain outside the database, under `<state dir>/anchors/`: one
folder (0700, opened without following symlinks, refused when others may write it), records read
and written atomically (temp file + rename, 0600), and each record sealed with an HMAC under the
installation key, so only this installation writes what decides whether a chain is trusted."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.errors import EngineError
from engine.keys import derived_key
from engine.paths import state_dir


class AnchorError(EngineError):
    """The anchor folder or file cannot be used (or would have to move backwards)."""


class KeyedElsewhere(AnchorError):
    """A sealed anchor record that does not verify under this installation's key."""


def anchors_dir() -> Path:
    return state_dir() / "anchors"


def _open_dir(d: Path, create: bool) -> int | None:
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
def folder(create: bool, sub: str = "") -> Iterator[int | None]:
    """The anchors folder (or its subfolder `sub`) as a descriptor; None when it does not exist."""
    d = anchors_dir()
    if sub and create:
        _close(_open_dir(d, True))
    fd = _open_dir(d / sub if sub else d, create)
    try:
        yield fd
    finally:
        _close(fd)


def _close(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def read_json(dfd: int, name: str, shown: Path) -> dict | None:
    """A record (a JSON object) or None when there is none; AnchorError when it is unusable."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AnchorError(f"{shown}: cannot read the audit anchor ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise AnchorError(f"{shown}: the audit anchor is not a regular file")
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
            if len(data) > 1 << 20:
                raise AnchorError(f"{shown}: the audit anchor is too large")
    finally:
        os.close(fd)
    try:
        rec = json.loads(data)
        if not isinstance(rec, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        raise AnchorError(f"{shown}: the audit anchor is unreadable ({exc})") from None
    return rec


def write_json(dfd: int, name: str, rec: dict) -> None:
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


def _mac(rec: dict) -> str:
    body = {k: v for k, v in rec.items() if k != "mac"}
    data = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hmac.new(
        derived_key("audit-anchor"), data.encode("utf-8", "surrogatepass"), hashlib.sha256
    ).hexdigest()


def seal(rec: dict) -> dict:
    return {**rec, "mac": _mac(rec)}


def check_seal(rec: dict, shown: Path) -> dict:
    """`rec` if its seal verifies (a version-1 anchor has none: it is sealed when it next moves)."""
    if int(rec.get("version") or 1) >= 2 and not hmac.compare_digest(str(rec.get("mac", "")), _mac(rec)):
        raise KeyedElsewhere(
            f"{shown}: the audit anchor does not verify under this installation's key: keyed elsewhere "
            "(with another installation key) or forged"
        )
    return rec


def place_name(place: str) -> str:
    """The place record's file name: a keyed hash of the place, so it is found by what only this
    installation can compute, and names no path."""
    return (
        hmac.new(
            derived_key("audit-place"), place.encode("utf-8", "surrogatepass"), hashlib.sha256
        ).hexdigest()[:32]
        + ".json"
    )
