"""Keyed fingerprints of a verified case: re-verification after the sealed texts are gone.

A verified case drops its sealed copy of the text (engine/forget/seal.py), so nothing could look
for the text again if it came back later (an old backup restored, an agent re-telling it). So the
verify that passes keeps fingerprints instead: keyed BLAKE2b (8 bytes, under a key derived from the
installation key, engine/keys.py) of the folded text's 12-byte windows (UTF-8) at every 6th
offset, and of each text shorter than a window whole. Any recurrence of 17+ bytes holds one of
those windows at some offset; a shorter text recurs whole. Without the key file they are noise; the
text is never kept. Windows that live records held at verification (common phrases) are left out.

Re-verification slides the same windows over every live row's folded text (read through SQL on
both backends) and counts the positions whose fingerprint is the case's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from engine.forget.fold import fold
from engine.forget.scan import W, bounded, bounded_at, find
from engine.forget.verify import MIN_PIECE, encoded
from engine.keys import derived_key

STRIDE = 6  # windows kept at every 6th offset: a recurrence of W + STRIDE - 1 = 17 bytes is seen


def _mark(key: bytes, data: bytes) -> str:
    return hashlib.blake2b(data, key=key, digest_size=8).hexdigest()


def _folded(text: str) -> bytes:
    return encoded(" ".join(fold(text).split()))


def take(texts: Iterable[str], strict: Iterable[str], live: str) -> dict[str, list[str]]:
    """{"W": fingerprints of 12-byte windows, "<n>": of whole texts of n bytes}, over the folded
    text's UTF-8. `live`: the live records' text at verification; windows of `texts` it holds are
    left out (found in one vectorized pass, scan.find); `strict`, a forget-by-query's query, must
    recur nowhere: all of it is kept."""
    key = derived_key("forget-prints")
    low = _folded(live)
    wins: set[bytes] = set()
    keep: set[bytes] = set()  # the query's windows: never left out
    whole: set[bytes] = set()
    for t, must in [(x, False) for x in texts] + [(x, True) for x in strict]:
        f = _folded(t)
        if len(f) >= W:
            (keep if must else wins).update(f[i : i + W] for i in range(0, len(f) - W + 1, STRIDE))
        elif len(f.decode("utf-8", "replace")) >= MIN_PIECE and (must or not bounded(low, f)):
            whole.add(f)
    wins = (wins - find(low, wins)[1]) | keep  # one vectorized pass over the live text
    out: dict[str, list[str]] = {"W": sorted({_mark(key, w) for w in wins})} if wins else {}
    for f in whole:
        out.setdefault(str(len(f)), []).append(_mark(key, f))
    return {k: sorted(v) for k, v in out.items()}


def recurrences(prints: dict[str, list[str]], live: Iterable[str]) -> int:
    """Positions in the live texts (each folded, whitespace collapsed) where a fingerprinted window
    or whole short text occurs again (a short text only as a whole token). One keyed hash per byte
    and size: seconds for a database of a few megabytes of text, minutes for hundreds."""
    key = derived_key("forget-prints")
    sizes = {(W if k == "W" else int(k)): set(v) for k, v in prints.items() if v}
    hits = 0
    for text in live:
        f = _folded(text)
        for n, marks in sizes.items():
            for i in range(len(f) - n + 1):
                if n < W and not bounded_at(f, i, n):
                    continue
                if _mark(key, f[i : i + n]) in marks:
                    hits += 1
    return hits
