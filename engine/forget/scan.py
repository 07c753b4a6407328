"""The byte scan that proves forgotten text is gone, run in a CHILD process.

Why a child: POSIX locks belong to a process, and closing ANY descriptor of a file drops all of
that process's locks on it. SQLite keeps its WAL locks that way, so an engine that opened and
closed memory.db, -wal or -shm to read their bytes would silently lose its locks, and another
process could then reset the WAL under it (the console's writes went to an orphaned WAL and the
index came out malformed). This file imports only numpy and the standard library and is run as a
script (`python -I engine/forget/scan.py`): it holds no connection and no lock, so its opens and
closes affect nobody.

Protocol: stdin is one JSON line {"files": [...], "short": [hex], "pieces": [hex], "terms": [hex],
"term_budget": n,
"wins": count} followed by count x 12 raw window bytes; stdout is one JSON object {path: hits}.
Every 8-byte key of a file is hashed in numpy (see positions): a 100 MB database in seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

W = 12  # bytes (and characters) in a distinctive window
_MAGIC = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing of the 8-byte keys
_MASK_BITS = 22
_SHIFT = np.uint64(64 - _MASK_BITS)
CHUNK = 8 << 20
TERM_SCAN_BUDGET = 5_000_000_000  # terms x bytes: past this, a file is scanned for windows only
SCAN_TIMEOUT_S = 3600


def _key(k8: np.ndarray, k4: np.ndarray) -> np.ndarray:
    """One 64-bit key for a 12-byte window: its first 8 bytes hashed, xor its last 4."""
    return (k8 * _MAGIC) ^ k4.astype(np.uint64)


def positions(data: bytes, wins: set[bytes]) -> tuple[np.ndarray, dict]:
    """Sorted offsets in `data` where one of the 12-byte `wins` starts, and {key: window}.

    The 8 bytes at every offset are read as little-endian integers straight from the buffer (eight
    strided views, no copying) and hashed with one multiply into a bitmap; candidates are then
    matched exactly on all 12 bytes, all in numpy. About a second per 100 MB."""
    if not wins or len(data) < W:
        return np.zeros(0, dtype=np.int64), {}
    ws = sorted(wins)
    k8 = np.frombuffer(b"".join(w[:8] for w in ws), dtype="<u8")
    keys = _key(k8, np.frombuffer(b"".join(w[8:W] for w in ws), dtype="<u4"))
    by_key = dict(zip(keys.tolist(), ws, strict=True))
    sorted_keys = np.unique(keys)
    bitmap = np.zeros(1 << _MASK_BITS, dtype=bool)
    bitmap[((k8 * _MAGIC) >> _SHIFT).astype(np.intp)] = True
    arr = np.frombuffer(data, dtype=np.uint8)
    last = len(data) - W + 1  # a window must fit
    found = []
    for start in range(0, last, CHUNK):
        stop = min(start + CHUNK, last)
        for k in range(8):
            p0 = start + k
            count = max(0, (stop - p0 + 7) // 8)
            if count == 0:
                continue
            v = np.frombuffer(data, dtype="<u8", count=count, offset=p0)
            idx = np.nonzero(bitmap[((v * _MAGIC) >> _SHIFT).astype(np.intp)])[0]
            if len(idx) == 0:
                continue
            pos = p0 + 8 * idx
            tail = (
                arr[pos + 8].astype(np.uint32)
                | (arr[pos + 9].astype(np.uint32) << 8)
                | (arr[pos + 10].astype(np.uint32) << 16)
                | (arr[pos + 11].astype(np.uint32) << 24)
            )
            kk = _key(v[idx], tail)
            hit = np.isin(kk, sorted_keys)
            found.append(np.stack([pos[hit], kk[hit].view(np.int64)], axis=1))
    if not found:
        return np.zeros(0, dtype=np.int64), {}
    both = np.concatenate(found)
    both = both[np.argsort(both[:, 0], kind="stable")]
    # A key collision could stand for another window: check each distinct key's bytes once.
    uniq, first = np.unique(both[:, 1], return_index=True)
    ok_keys, seen = [], {}
    for key, at in zip(uniq.tolist(), both[first, 0].tolist(), strict=True):
        w = by_key.get(int(np.int64(key).view(np.uint64)))
        if w is not None and data[at : at + W] == w:
            ok_keys.append(key)
            seen[key] = w
    keep = np.isin(both[:, 1], np.asarray(ok_keys, dtype=np.int64))
    return both[keep, 0], seen


def find(data: bytes, wins: set[bytes]) -> tuple[int, set[bytes]]:
    """(occurrences with overlapping hits merged, the windows seen) of `wins` in `data`."""
    pos, seen = positions(data, wins)
    if len(pos) == 0:
        return 0, set()
    reach = np.maximum.accumulate(pos + W - 1)
    count = 1 + int(np.count_nonzero(pos[1:] > reach[:-1]))
    return count, set(seen.values())


def _standalone(data: bytes, term: bytes) -> int:
    """Occurrences of `term` not glued to letters or digits (in a record, neighbouring columns'
    text lies right next to it: "question" + "support" is not the word "questions")."""
    n, i = 0, data.find(term)
    while i >= 0:
        before = data[i - 1 : i] if i else b""
        after = data[i + len(term) : i + len(term) + 1]
        if not (before.isalnum() or after.isalnum()):
            n += 1
        i = data.find(term, i + 1)
    return n


def _kind(b: int) -> int:
    """0 punctuation or space, 1 a digit, 2 a letter (ASCII, or any byte of a non-ASCII character)."""
    return 1 if 0x30 <= b <= 0x39 else 2 if (b >= 0x80 or 0x61 <= (b | 0x20) <= 0x7A) else 0


def bounded(data: bytes, piece: bytes) -> int:
    """Occurrences of a short piece (a PIN, a code) that are whole tokens: a piece starting with a
    digit is not preceded by a digit, one starting with a letter not by a letter (and the same at
    its end). A letter after a number still counts: in a record "4821" lies right beside the next
    column's text ("4821semantic"), and "4821" inside "148213" must not; nor inside a hash."""
    if not piece:
        return 0
    n, i = 0, data.find(piece)
    while i >= 0:
        n += bounded_at(data, i, len(piece))
        i = data.find(piece, i + 1)
    return n


def bounded_at(data: bytes, i: int, size: int) -> bool:
    """Is data[i:i+size] a whole token (see `bounded`)?"""
    j = i + size
    first, last = _kind(data[i]), _kind(data[j - 1])
    ok_before = i == 0 or not first or _kind(data[i - 1]) != first
    ok_after = j >= len(data) or not last or _kind(data[j]) != last
    hexy = all(c in _HEX for c in data[i:j])
    return ok_before and ok_after and not (hexy and _in_hex_run(data, i, j))


_HEX = frozenset(b"0123456789abcdefABCDEF")
HEX_RUN = 8  # a piece inside this many hex digits is part of a hash or an id, not the piece


def _in_hex_run(data: bytes, i: int, j: int) -> bool:
    """Is data[i:j] inside a run of HEX_RUN+ hex digits (the keyed hashes, ids and audit chain
    every database holds: "4821" in "9f4821ab0c..." is not a PIN)?"""
    a, b = i, j
    while a > 0 and data[a - 1] in _HEX and b - a < HEX_RUN:
        a -= 1
    while b < len(data) and data[b] in _HEX and b - a < HEX_RUN:
        b += 1
    return b - a >= HEX_RUN


def scan_bytes(
    data: bytes,
    wins: set[bytes],
    short: set[bytes],
    terms: set[bytes],
    term_budget: int = TERM_SCAN_BUDGET,
    pieces: set[bytes] = frozenset(),  # type: ignore[assignment]
) -> int:
    """Occurrences of any target in `data`. Short pieces are always scanned (they are few)."""
    n = sum(data.count(x) for x in short) + find(data, wins)[0] + sum(bounded(data, x) for x in pieces)
    if len(terms) * max(len(data), 1) <= term_budget:
        n += sum(_standalone(data, x) for x in terms)
    return n


def _read(path: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return b""
    with os.fdopen(fd, "rb", buffering=0) as f:  # readall: one buffer sized from fstat
        return f.read()


def scan_files(
    files: list[Path],
    wins: set[bytes],
    short: set[bytes],
    terms: set[bytes],
    term_budget: int = TERM_SCAN_BUDGET,
    pieces: set[bytes] | None = None,
) -> dict[str, int]:
    """{file: hits}, scanned by a child process (never in the caller's: see the module docstring)."""
    head = (
        json.dumps(
            {
                "files": [str(f) for f in files],
                "short": sorted(x.hex() for x in short),
                "pieces": sorted(x.hex() for x in pieces or ()),
                "terms": sorted(x.hex() for x in terms),
                "term_budget": term_budget,
                "wins": len(wins),
            }
        ).encode()
        + b"\n"
    )
    proc = subprocess.run(
        [sys.executable, "-I", str(Path(__file__).resolve())],
        input=head + b"".join(sorted(wins)),
        capture_output=True,
        timeout=SCAN_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        from engine.errors import EngineError

        last = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]
        raise EngineError(f"the forget verification scan failed ({last})")
    return json.loads(proc.stdout)


LOCATE_MAX = 20  # hits located per file: enough to act on, bounded for a file full of residue


def locate_bytes(data: bytes, wins: set[bytes], short: set[bytes], pieces: set[bytes]) -> list[list]:
    """[offset, piece (hex)] of the first hits in `data`: windows, short wholes, short pieces."""
    out: list[list] = []
    pos, seen = positions(data, wins)
    for off in pos[:LOCATE_MAX].tolist():
        out.append([int(off), data[off : off + W].hex()])
    for x in sorted(short | pieces):
        j = data.find(x)
        while j >= 0 and len(out) < 3 * LOCATE_MAX:
            if x in short or bounded_at(data, j, len(x)):
                out.append([j, x.hex()])
            j = data.find(x, j + 1)
    return sorted(out)[:LOCATE_MAX]


def page_of(path: str, data: bytes, offset: int, page_size: int) -> int | None:
    """The database page a byte belongs to: in the main file by its offset, in a WAL by the page
    number its frame's header names (WAL header 32 bytes, then frames of 24 + page_size)."""
    if page_size <= 0:
        return None
    if path.endswith("-wal"):
        if offset < 32:
            return None
        start = 32 + (offset - 32) // (24 + page_size) * (24 + page_size)
        return int.from_bytes(data[start : start + 4], "big") or None
    if path.endswith("-shm"):
        return None
    return offset // page_size + 1


def locate_files(
    files: list[Path], wins: set[bytes], short: set[bytes], pieces: set[bytes]
) -> dict[str, list]:
    """{file: [[offset, piece hex, page or None], ...]}: where the residue lies, found by a child
    process like scan_files (never opened in the caller's process)."""
    head = json.dumps({"files": [str(f) for f in files], "short": sorted(x.hex() for x in short),
                       "pieces": sorted(x.hex() for x in pieces), "terms": [], "term_budget": 0,
                       "wins": len(wins), "locate": True}).encode() + b"\n"  # fmt: skip
    proc = subprocess.run([sys.executable, "-I", str(Path(__file__).resolve())],
                          input=head + b"".join(sorted(wins)), capture_output=True,
                          timeout=SCAN_TIMEOUT_S, check=False)  # fmt: skip
    if proc.returncode != 0:
        return {}
    return json.loads(proc.stdout)


def _page_size(files: list[str]) -> int:
    for f in files:
        if not f.endswith(("-wal", "-shm")):
            head = _read(f)[:100]
            if head.startswith(b"SQLite format 3\x00"):
                n = int.from_bytes(head[16:18], "big")
                return 65536 if n == 1 else n
    return 0


def main() -> None:
    raw = sys.stdin.buffer.read()
    nl = raw.index(b"\n")
    doc = json.loads(raw[:nl])
    blob = raw[nl + 1 :]
    wins = {blob[i : i + W] for i in range(0, doc["wins"] * W, W)}
    short = {bytes.fromhex(x) for x in doc["short"]}
    terms = {bytes.fromhex(x) for x in doc["terms"]}
    pieces = {bytes.fromhex(x) for x in doc.get("pieces", [])}
    if doc.get("locate"):
        size = _page_size(doc["files"])
        found = {}
        for f in doc["files"]:
            data = _read(f)
            found[f] = [[o, h, page_of(f, data, o, size)] for o, h in locate_bytes(data, wins, short, pieces)]
        sys.stdout.write(json.dumps(found))
        return
    out = {f: scan_bytes(_read(f), wins, short, terms, doc["term_budget"], pieces) for f in doc["files"]}
    sys.stdout.write(json.dumps(out))


if __name__ == "__main__":
    main()
