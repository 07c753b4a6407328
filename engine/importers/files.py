"""Reading what an import points at without being led astray: only regular files are opened (a FIFO
would block forever, a device never ends), trees are walked to a bounded depth without following a
symlink out of the import root or round a loop, and files are size-capped."""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from pathlib import Path

from engine.errors import ImportFailed

MAX_FILE_BYTES = 64 * 1024 * 1024  # a memory file or skill larger than this is not one
MAX_DEPTH = 12  # skills/<category>/<skill>/... is 3 deep; .archive adds 1


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words (for one-line refusals)."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


FileIds = Collection[tuple[int, int]]  # (st_dev, st_ino) pairs


def database_files(db: Path) -> frozenset[tuple[int, int]]:
    """(device, inode) of the live database and its -wal/-shm, by stat (which opens nothing).
    An import never opens them: closing any descriptor of a file drops every POSIX lock this
    process holds on it, SQLite's included."""
    out = set()
    for suffix in ("", "-wal", "-shm"):
        try:
            st = os.stat(f"{db}{suffix}")
        except OSError:
            continue
        out.add((st.st_dev, st.st_ino))
    return frozenset(out)


def _open_checked(path: Path, avoid: FileIds) -> int:
    """A read-only descriptor on `path`, opened only once stat shows a regular file that is not
    one of the database's own (`avoid`)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ImportFailed(f"{path}: {kind_of(st.st_mode)}, not a regular file; not read")
        if (st.st_dev, st.st_ino) in avoid:
            raise ImportFailed(f"{path}: this memory database's own file; not read")
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot read ({exc.strerror})") from None


def read_regular(path: Path, *, limit: int | None = None, avoid: FileIds = frozenset()) -> bytes:
    """The bytes of a regular file, at most `limit` (MAX_FILE_BYTES). Checked by stat before
    opening (so a FIFO, a device or one of the database's own files, `avoid`, is never opened)
    and again on the open descriptor (so a swap in between is caught)."""
    limit = MAX_FILE_BYTES if limit is None else limit
    fd = _open_checked(path, avoid)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ImportFailed(f"{path}: {kind_of(st.st_mode)}, not a regular file; not read")
        if st.st_size > limit:
            raise ImportFailed(f"{path}: {st.st_size:,} bytes; files over {limit:,} are not read")
        data = f.read(st.st_size + 1)  # read(n) allocates n: ask for what stat promised
        if len(data) > st.st_size:  # it grew meanwhile: read the rest, still capped
            data += f.read(limit + 1 - len(data))
    if len(data) > limit:
        raise ImportFailed(f"{path}: over {limit:,} bytes; not read")
    return data


def open_regular(path: Path, *, avoid: FileIds = frozenset()):
    """A binary stream over a regular file (for line-by-line readers of big JSONL files); never
    one of the database's own files (`avoid`)."""
    fd = _open_checked(path, avoid)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ImportFailed(f"{path}: not a regular file; not read")
    return os.fdopen(fd, "rb")


def inside(root: Path, path: Path) -> bool:
    """Whether `path`, symlinks resolved, stays under `root` (itself resolved)."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling, or a symlink loop
        return False
    return real == root or root in real.parents


def regular_file(root: Path, path: Path, warn) -> bool:
    """Whether `path` may be read as part of the import rooted at `root` (resolved): a regular
    file whose real location is inside the root (neither it nor a folder above it a symlink
    leading out). Anything else is reported through `warn` and skipped, never opened."""
    try:
        os.lstat(path)
    except OSError:
        return False
    if not inside(root, path):
        warn(f"{path}: a symlink that leaves {root}; skipped")
        return False
    try:
        st = os.stat(path)
    except OSError as exc:
        warn(f"{path}: cannot read ({exc.strerror}); skipped")
        return False
    if not stat.S_ISREG(st.st_mode):
        warn(f"{path}: {kind_of(st.st_mode)}, not a regular file; skipped")
        return False
    return True


def folder(root: Path, path: Path, warn) -> bool:
    """Whether `path` is a folder to read from: inside the root once symlinks are resolved."""
    if not path.is_dir():
        return False
    if not inside(root, path):
        warn(f"{path}: a symlink that leaves {root}; skipped")
        return False
    return True


def find(root: Path, name: str, warn, *, max_depth: int = MAX_DEPTH) -> list[Path]:
    """Every regular file called `name` under `root`, sorted. Folders deeper than `max_depth`,
    symlinks that leave the root and folders already seen (a symlink loop) are not entered."""
    base = root.resolve()
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()

    def visit(d: Path, depth: int) -> None:
        try:
            st = os.stat(d)
        except OSError:
            return
        if (st.st_dev, st.st_ino) in seen:
            return  # a symlink back up the tree
        seen.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            warn(f"{d}: cannot list ({exc.strerror}); skipped")
            return
        for e in entries:
            p = Path(e.path)
            if e.is_symlink() and not inside(base, p):
                warn(f"{p}: a symlink that leaves {root}; skipped")
                continue
            if e.name == name:
                if regular_file(base, p, warn):
                    found.append(p)
                continue
            try:
                is_dir = e.is_dir()  # follows a symlink that stays inside
            except OSError:
                continue
            if is_dir:
                if depth >= max_depth:
                    warn(f"{p}: deeper than {max_depth} folders; not searched")
                    continue
                visit(p, depth + 1)

    visit(root, 0)
    return sorted(found)
