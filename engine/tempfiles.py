"""Private temporary folders for the engine's bulk copies (migrate's export, an export's file
before its rename): they hold every record's text, so they must never outlive the operation.

Each operation gets `<home>/tmp/<pid>-<random>/` (0700; files in it 0600), removed when the
operation ends however it ends. A process killed with -9 cannot remove its own, so the next
engine that opens the same home removes every folder whose process is gone (`sweep`), and a
forget's file scan covers whatever it still finds there (`leftovers`: a live operation's too).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

from engine.paths import private_dir

FOLDER = "tmp"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive, not ours to judge
        return True
    return True


def _owner(name: str) -> int | None:
    head = name.partition("-")[0]
    return int(head) if head.isdigit() else None


def sweep(home: Path) -> int:
    """Remove the folders of operations whose process is gone. Returns how many."""
    root = home / FOLDER
    if not root.is_dir() or root.is_symlink():
        return 0
    gone = 0
    for entry in root.iterdir():
        pid = _owner(entry.name)
        if pid is not None and not alive(pid) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
            gone += 1
    return gone


def leftovers(home: Path) -> list[Path]:
    """Every file still inside the home's temporary folders (for a forget's scan)."""
    root = home / FOLDER
    if not root.is_dir() or root.is_symlink():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


@contextlib.contextmanager
def private_folder(home: Path) -> Iterator[Path]:
    """A fresh 0700 folder for one operation, removed on every exit path (next start: `sweep`)."""
    private_dir(home / FOLDER)
    sweep(home)
    folder = private_dir(home / FOLDER / f"{os.getpid()}-{secrets.token_hex(6)}")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
