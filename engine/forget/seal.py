"""A forget case's texts, sealed outside the database until the case is verified.

Verifying (and finishing an interrupted execution: redacting reports) needs the forgotten texts.
Keeping them in the database would defeat the forget; keeping them only in the executing process's
memory left a case that process did not finish (kill -9, a long reader in another process) stuck
at `executed` for good. So execute seals them in a file beside the database,
`forget/<token>.sealed` (0600 in a checked 0700 folder, written before the deletion commits), and
removes it once verification passes. The token is random and stored in the case, so any process of
this installation can resume or re-verify it.

Sealing: SHAKE-256 keystream under a key derived from the installation key (engine/keys.py, kept
outside every database) and a fresh nonce, then HMAC-SHA256 over nonce and ciphertext (encrypt
then MAC). Without the key file the sealed file is noise. Hashed 12-byte windows were considered
instead: a fast window hash an attacker can invert from one guessed window exposes the whole text
(overlapping windows chain byte by byte); a strong one is too slow to run at every byte offset.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

import numpy as np

from engine.errors import EngineError, cut
from engine.keys import derived_key
from engine.paths import home_of, open_dir, read_at, write_at

MAGIC = b"MCSEAL1\n"
NONCE = 16
TAG = 32
FOLDER = "forget"


def new_token() -> str:
    return secrets.token_hex(16)


def _folder(db_path: Path) -> Path:
    return home_of(db_path) / FOLDER


def _name(token: str) -> str:
    if not (isinstance(token, str) and len(token) == 32 and all(c in "0123456789abcdef" for c in token)):
        raise EngineError(f"forget case seal {cut(token)} is not a valid token")
    return f"{token}.sealed"


def _xor(data: bytes, nonce: bytes) -> bytes:
    stream = hashlib.shake_256(derived_key("forget-seal") + nonce).digest(len(data)) if data else b""
    return np.bitwise_xor(np.frombuffer(data, np.uint8), np.frombuffer(stream, np.uint8)).tobytes()


def _tag(nonce: bytes, ct: bytes) -> bytes:
    return hmac.new(derived_key("forget-seal-mac"), nonce + ct, hashlib.sha256).digest()


def seal(db_path: Path, token: str, texts: list[str], strict: list[str], main: int | None = None) -> None:
    """`main`: how many of `texts` (first) are the records' own texts; the rest are strings of
    their metadata (a shared prompt may stay live elsewhere, so only the main ones are looked for
    whole in live rows)."""
    doc = {"texts": texts, "strict": strict, "main": len(texts) if main is None else int(main)}
    plain = json.dumps(doc).encode("ascii")  # ensure_ascii: any str
    nonce = secrets.token_bytes(NONCE)
    ct = _xor(plain, nonce)
    folder = _folder(db_path)
    fd = open_dir(folder)
    try:
        write_at(fd, _name(token), MAGIC + nonce + _tag(nonce, ct) + ct, label=folder / _name(token))
    finally:
        os.close(fd)


def unseal(db_path: Path, token: str | None) -> tuple[list[str], list[str]] | None:
    """(texts, strict) of a case, or None when there is no sealed copy (verified, or sealed by
    another installation's key)."""
    doc = _open(db_path, token)
    return None if doc is None else (list(doc["texts"]), list(doc["strict"]))


def main_count(db_path: Path, token: str | None) -> int:
    """How many of the sealed texts are the records' own (the rest: their metadata's strings)."""
    doc = _open(db_path, token)
    return 0 if doc is None else int(doc.get("main", len(doc["texts"])))


def _open(db_path: Path, token: str | None) -> dict | None:
    if not token:
        return None
    folder = _folder(db_path)
    if not os.path.lexists(folder):
        return None
    fd = open_dir(folder, create=False)
    try:
        raw = read_at(fd, _name(token))
    except FileNotFoundError:
        return None
    finally:
        os.close(fd)
    head = len(MAGIC)
    if raw[:head] != MAGIC or len(raw) < head + NONCE + TAG:
        raise EngineError(f"{folder / _name(token)}: not a sealed forget case")
    nonce, tag, ct = (
        raw[head : head + NONCE],
        raw[head + NONCE : head + NONCE + TAG],
        raw[head + NONCE + TAG :],
    )
    if not hmac.compare_digest(tag, _tag(nonce, ct)):
        raise EngineError(
            f"{folder / _name(token)}: the sealed forget case does not open with this "
            f"installation's key (sealed elsewhere, or damaged)"
        )
    return dict(json.loads(_xor(ct, nonce)))


def discard(db_path: Path, token: str | None) -> None:
    if not token:
        return
    folder = _folder(db_path)
    if not os.path.lexists(folder):
        return
    fd = open_dir(folder, create=False)
    try:
        os.unlink(_name(token), dir_fd=fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)
