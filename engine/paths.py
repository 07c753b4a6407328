"""Where memconsole keeps things, in one place (platformdirs; env vars point it elsewhere)."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Set as AbstractSet
from contextlib import suppress
from functools import lru_cache
from pathlib import Path

from platformdirs import user_config_dir, user_data_dir

from engine.errors import DiskFull


def default_db() -> Path:
    env = os.environ.get("MEMCONSOLE_DB")
    if env:
        return Path(env)
    return Path(user_data_dir("memconsole", appauthor=False)) / "memory.db"


def state_dir() -> Path:
    """Where the installation's key and audit anchors live (outside every database)."""
    env = os.environ.get("MEMCONSOLE_STATE")
    if env:
        return Path(env)
    return _config_dir(os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME"))


@lru_cache(maxsize=8)
def _config_dir(xdg: str | None, home: str | None) -> Path:
    """platformdirs' answer for these environment values (asked ~20 times per agent call: the
    key and the audit anchors, issue #24); keyed on what it reads, so a changed env is seen."""
    return Path(user_config_dir("memconsole", appauthor=False))


_SERVER = re.compile(r"(?:^|/)(postgres(?:ql)?):/+(.*)$", re.IGNORECASE)


def server_url(db: str | os.PathLike) -> str | None:
    """The PostgreSQL URL `db` names, also when a caller made a path of it (`Path(url)` keeps one
    slash after the scheme, `.absolute()` puts the working folder in front); None for a file."""
    m = _SERVER.search(os.fspath(db))
    return None if m is None else f"{m.group(1).lower()}://{m.group(2)}"


def is_server(db: str | os.PathLike) -> bool:
    return server_url(db) is not None


def server_folder_name(url: str | os.PathLike) -> str:
    """A folder name for a server's database: host, port and database in safe characters (never
    the user's password), plus a short hash of user, host (or socket folder), port and database,
    so two servers whose names sanitize alike never share reports or sealed cases."""
    import hashlib
    from urllib.parse import parse_qs, unquote, urlsplit

    parts = urlsplit(server_url(url) or os.fspath(url))
    query = parse_qs(parts.query)
    host = parts.hostname or "".join(query.get("host", [])) or "local"
    try:
        port = parts.port or int("".join(query.get("port", [])) or 5432)
    except ValueError:
        port = 5432
    user = unquote(parts.username or "".join(query.get("user", [])) or "")
    db = unquote(parts.path.lstrip("/") or "".join(query.get("dbname", [])) or user or "postgres")
    ident = f"{user}@{host}:{port}/{db}"
    digest = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    place = "local" if host.startswith("/") else host
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in f"{place}-{port}-{db}")
    return f"{safe.strip('._-')[:80] or 'server'}-{digest}"


def home_of(db: str | os.PathLike) -> Path:
    """The folder where the engine keeps a database's own files (curator reports, sealed forget
    cases): beside a SQLite file; for a server, `servers/<host-port-db-hash>/` under the state dir
    (created 0700, checked), since a URL has no folder of its own on this machine."""
    if not is_server(db):
        return Path(db).resolve().parent
    root = state_dir()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    servers = private_dir(root / "servers")
    return private_dir(servers / server_folder_name(db))


def config_file() -> Path:
    return Path(user_config_dir("memconsole", appauthor=False)) / "config.toml"


# -- the engine's own files beside the database ------------------------------------------------------
# Reports, redactions and sealed forget cases are created and rewritten only through descriptors:
# each folder is opened O_NOFOLLOW|O_DIRECTORY and checked (ours, a folder, 0700), each file is
# opened relative to it with O_NOFOLLOW and checked (a regular file of ours with one link) BEFORE
# it is truncated, so a planted symlink or hard link (to memory.db, ~/.bashrc, /dev/...) is refused
# with one line instead of being written through.


def _refuse(path, why: str):
    from engine.errors import EngineError

    return EngineError(
        f"{path}: {why}; memconsole never writes its reports through links or into "
        f"folders it does not own (remove it and run again)"
    )


def open_dir(name: str | os.PathLike, *, at: int | None = None, label=None, create: bool = True) -> int:
    """A descriptor of folder `name` (relative to folder descriptor `at`, if given), created 0700
    when missing, never through a symlink, checked to be ours; too-open modes are tightened."""
    label = label or name
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=at)
        except FileExistsError:
            pass
        except OSError as exc:
            raise _refuse(label, f"cannot create the folder ({exc.strerror})") from None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=at)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(name, at):
            raise _refuse(label, "is a symbolic link") from None
        raise _refuse(label, f"is not a usable folder ({exc.strerror})") from None
    st = os.fstat(fd)
    if st.st_uid != os.geteuid():
        os.close(fd)
        raise _refuse(label, "belongs to another user")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.fchmod(fd, 0o700)
    return fd


def _is_link(name, at) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=at, follow_symlinks=False).st_mode)
    except OSError:
        return False


def check_entry(
    name: str, *, at: int, label, avoid: AbstractSet[tuple[int, int]] = frozenset()
) -> os.stat_result:
    """lstat of `name` in folder `at`, refused unless a regular file of ours with one link and not
    one of the `avoid` (device, inode) pairs (the database's own files). Nothing is opened."""
    st = os.stat(name, dir_fd=at, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(label, "is a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(label, "is not a regular file")
    if st.st_nlink != 1 or (st.st_dev, st.st_ino) in avoid:
        raise _refuse(label, "is a hard link to another file")
    if st.st_uid != os.geteuid():
        raise _refuse(label, "belongs to another user")
    return st


def write_at(at: int, name: str, data: bytes, *, label, create: bool = True) -> None:
    """Replace the content of file `name` in folder `at` (created 0600), checked before truncation."""
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    try:
        fd = os.open(name, flags, 0o600, dir_fd=at)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(label, "is a symbolic link") from None
        raise _refuse(label, f"cannot be written ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_uid != os.geteuid():
            raise _refuse(label, "is not a private regular file")
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, 0o600)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        with suppress(OSError):  # no half-written file stays behind
            os.ftruncate(fd, 0)
            if create:
                os.unlink(name, dir_fd=at)
        raise DiskFull(f"{label}: disk full; the file was not written") from None
    finally:
        os.close(fd)


def read_at(at: int, name: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=at)
    try:
        chunks: list[bytes] = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                return b"".join(chunks)
            chunks.append(b)
    finally:
        os.close(fd)


def private_dir(path: Path) -> Path:
    """Create (0700) and check a folder whose parent exists (reports and exports beside the db)."""
    os.close(open_dir(path))
    return path


def private_write(path: Path, text: str) -> None:
    """Write a report or export file created 0600, never through a link."""
    fd = open_dir(path.parent)
    try:
        write_at(fd, path.name, text.encode("utf-8", "surrogatepass"), label=path)
    finally:
        os.close(fd)
