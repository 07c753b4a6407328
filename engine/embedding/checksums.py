"""Checking a model's weight files against the SHA-256 its registry entry publishes, at load.

Hashing all-MiniLM-L6-v2's 87 MB of weights costs ~0.3 s, which a cold `memconsole search` must not
pay every time. So a file is hashed whole the first time it is seen, and what was verified is
recorded (state dir, `verified-models.json`) with the file's identity: device, inode, size,
mtime_ns and ctime_ns. A later load re-hashes only when any of those differ (a replaced or
rewritten file always changes ctime, which no user can set back). Small files (< 1 MB: config,
tokenizer) are hashed on every load. A mismatch refuses the model with one line naming the file."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from engine.embedding.registry import ModelSpec
from engine.errors import EmbedderUnavailable

ALWAYS_BELOW = 1 << 20  # files smaller than this are hashed on every load
RECORD = "verified-models.json"


def _record_path() -> Path:
    from engine.paths import state_dir

    return state_dir() / RECORD


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _load_record() -> dict[str, list]:
    try:
        data = json.loads(_record_path().read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_record(record: dict[str, list]) -> None:
    with contextlib.suppress(Exception):  # a read-only or odd home: the next load hashes again
        from engine.paths import private_write

        private_write(_record_path(), json.dumps(record, sort_keys=True))


def verify(spec: ModelSpec, folder: str) -> list[str]:
    """Check every file `spec` lists in `folder`; returns the files hashed now (not taken from the
    record). Raises EmbedderUnavailable on a missing file or a checksum that differs."""
    record = _load_record()
    hashed: list[str] = []
    changed = False
    for name, want in spec.files:
        path = os.path.join(folder, name)
        try:
            st = os.stat(path)
        except OSError as exc:
            raise EmbedderUnavailable(f"{spec.id}: {name} is missing from {folder}") from exc
        ident = _identity(st)
        key = os.path.realpath(path)
        seen = record.get(key)
        if st.st_size >= ALWAYS_BELOW and seen == [*ident, want]:
            continue
        got = sha256_of(path)
        hashed.append(name)
        if got != want:
            raise EmbedderUnavailable(
                f"{spec.id}: {name} in {folder} does not match the published checksum"
                f" (sha256 {got[:16]}…, expected {want[:16]}…): refusing to load it"
            )
        if st.st_size >= ALWAYS_BELOW:
            record[key] = [*ident, want]
            changed = True
    if changed:
        _save_record(record)
    return hashed
