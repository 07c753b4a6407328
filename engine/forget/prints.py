"""Keyed fingerprints of a verified case: re-verification after the sealed texts are gone.

A verified case drops its sealed copy of the text (engine/forget/seal.py), so nothing could look
for the text again if it came back later (an old backup restored, an agent re-telling it). So the
verify that passes keeps fingerprints instead: keyed BLAKE2b (8 bytes, under a key derived from the
installation key, engine/keys.py) of the folded text's 12-character windows at every 6th offset,
and of each text shorter than a window whole. Any recurrence of 17+ characters holds one of those
windows at some offset; a shorter text recurs whole. Without the key file they are noise; the
text is never kept. Windows that live records held at verification (common phrases) are left out.

Re-verification slides the same windows over every live row's folded text (read through SQL on
both backends) and counts the positions whose fingerprint is the case's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from engine.forget.fold import fold
from engine.forget.scan import W
from engine.forget.verify import MIN_PIECE, token_at
from engine.keys import derived_key

STRIDE = 6  # windows kept at every 6th offset: a recurrence of W + STRIDE - 1 = 17 chars is seen


def _mark(key: bytes, text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=key, digest_size=8).hexdigest()


def take(texts: Iterable[str], strict: Iterable[str], live: str) -> dict[str, list[str]]:
    """{"W": fingerprints of windows, "<n>": fingerprints of whole texts of n characters}. `live`:
    the live records' text at verification; windows of `texts` it holds are left out (`strict`,
    a forget-by-query's query, must recur nowhere: all of it is kept)."""
    key = derived_key("forget-prints")
    low = fold(live)
    out: dict[str, set[str]] = {}
    for t, must in [(x, False) for x in texts] + [(x, True) for x in strict]:
        f = " ".join(fold(t).split())
        if len(f) >= W:
            for i in range(0, len(f) - W + 1, STRIDE):
                w = f[i : i + W]
                if must or w not in low:
                    out.setdefault("W", set()).add(_mark(key, w))
        elif len(f) >= MIN_PIECE and (must or f not in low):
            out.setdefault(str(len(f)), set()).add(_mark(key, f))
    return {k: sorted(v) for k, v in out.items()}


def recurrences(prints: dict[str, list[str]], live: Iterable[str]) -> int:
    """Positions in the live texts (each folded, whitespace collapsed) where a fingerprinted window
    or whole short text occurs again (a short text only as a whole token)."""
    key = derived_key("forget-prints")
    sizes = {(W if k == "W" else int(k)): set(v) for k, v in prints.items() if v}
    hits = 0
    for text in live:
        f = " ".join(fold(text).split())
        for n, marks in sizes.items():
            for i in range(len(f) - n + 1):
                if n < W and not token_at(f, i, n):
                    continue
                if _mark(key, f[i : i + n]) in marks:
                    hits += 1
    return hits
