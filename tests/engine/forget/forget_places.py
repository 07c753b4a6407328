"""What the forget reach tests share (test_forget_reach_and_resume, test_forget_links,
test_forget_malformed_and_audit_head, test_forget_verification): the canary text, a child process
on the same database, and every byte and value a SQLite database holds."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from engine.storage.sqlite.store import connect

ROOT = Path(__file__).resolve().parents[3]
CANARY = "Canary-Zebra-7f3a9c-Quokka"
SECRET = f"The locker combination {CANARY} opens the east door"
TWIN = f"The locker combination {CANARY} opens the east door!"


def child(code: str, db: Path, env: dict | None = None, **kw) -> subprocess.Popen:
    """Another process working on the same database through the engine."""
    pre = (
        "import sys, time, json\nfrom engine import open_engine, HashEmbedder, FixedClock\n"
        f"DB = {str(db)!r}\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", pre + textwrap.dedent(code)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )


def run_child(code: str, db: Path, env: dict | None = None) -> str:
    p = child(code, db, env)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err.decode()
    return out.decode()


def every_text(db: Path) -> str:
    """Every value of every table (virtual tables' shadow tables included), from a fresh connection."""
    c = connect(db)
    try:
        out = []
        names = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for n in names:
            try:
                for row in c.execute(f'SELECT * FROM "{n}"'):
                    out += [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in row]
            except Exception:  # noqa: BLE001 - a vec0 table read through its shadows
                continue
        return "\n".join(out)
    finally:
        c.close()


def file_bytes(db: Path) -> bytes:
    files = [Path(f"{db}{s}") for s in ("", "-wal", "-shm")]
    files += [p for p in (db.parent / "curator").rglob("*") if p.is_file()]
    return b"".join(p.read_bytes() for p in files if p.exists())
