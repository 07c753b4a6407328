"""The engine's own tokenizer for the keyword index: the lexemes FTS5's
`porter unicode61 remove_diacritics 2` produces, so BM25 on PostgreSQL ranks as SQLite does.

unicode61: a token is a maximal run of characters that are not separators (FTS5's own table from
Unicode 6.1: lexeme_separators.py; roughly letters, numbers, private use, and anything newer than
6.1 such as later emoji). Tokens are case-folded and stripped of diacritics. porter: FTS5 passes
tokens shorter than 3 or longer than 64 bytes through unchanged and stems the rest with Martin
Porter's algorithm as his C version has it; snowballstemmer's "porter" differs in three places,
bridged below: step 2's "logi" -> "log" and "bli" -> "ble", and step 1b undoubling every double
consonant but l, s, z (Snowball's list stops at bb dd ff gg mm nn pp rr tt: "trekked" -> "trek").
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Any

from engine.storage.lexeme_separators import SEPARATORS

PORTER_MIN, PORTER_MAX = 3, 64  # bytes, as FTS5's porter tokenizer counts them


@lru_cache(maxsize=65536)
def _fold(token: str) -> str:
    decomposed = unicodedata.normalize("NFD", token.lower().replace("\u00b5", "\u03bc"))
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    """Imported on first use: the package loads every language's stemmer (39 modules), which a
    one-shot CLI call that never stems here (SQLite's FTS5 stems itself) need not pay."""
    import snowballstemmer

    return snowballstemmer.stemmer("porter")


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    size = len(token.encode("utf-8"))
    if size < PORTER_MIN or size > PORTER_MAX:
        return token
    undoubled = _undouble(token)
    out = str(_stemmer().stemWord(undoubled if undoubled is not None else token))
    # Porter's own C version (which FTS5 follows) has step 2's "logi" -> "log" and "bli" -> "ble"
    # (then steps 3-5 go on: Snowball's run on the "ble" word does them); Snowball's has neither.
    if out.endswith("logi") and len(out) > 4 and _measure(out[:-4]) > 0:
        out = out[:-1]
    elif out.endswith("bli") and _measure(out[:-3]) > 0:
        out = str(_stemmer().stemWord(out[:-1] + "e"))
    return out


def _undouble(token: str) -> str | None:
    """Step 1b as Porter's C version does it where Snowball does not: "-ed"/"-ing" off a stem with a
    vowel that ends in a double consonant Snowball leaves doubled (kk, cc, vv, ...) -> the stem
    with one of them, which Snowball then takes through steps 1c-5 unchanged by 1a-1b."""
    for suffix in ("ing", "ed"):
        if token.endswith(suffix) and not token.endswith("eed"):
            stem = token[: -len(suffix)]
            if (
                len(stem) >= 2
                and stem[-1] == stem[-2]
                and stem[-1] not in "aeiouylszbdfgmnprt"
                and stem[-1].isascii()
                and any(c in "aeiouy" for c in stem[:-2])
            ):
                return stem[:-1]
    return None


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in `stem`."""
    m, prev_vowel = 0, False
    for i, ch in enumerate(stem):
        vowel = ch in "aeiou" or (ch == "y" and i > 0 and stem[i - 1] not in "aeiou")
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def _token_pattern() -> re.Pattern[str]:
    """A token: a run of anything but ASCII non-alphanumerics and FTS5's separators (one regex, so
    the scan runs in C: ingest tokenizes every row it writes)."""
    ranges = [(0, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7F), *SEPARATORS]
    cls = "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)
    return re.compile(f"[^{cls}]+")


_TOKEN = _token_pattern()


def tokens(text: str) -> list[str]:
    """The folded, unstemmed tokens of `text` in order."""
    out = [_fold(m) for m in _TOKEN.findall(text)]
    return [t for t in out if t]


def lexemes(text: str) -> list[str]:
    """The stemmed tokens of `text` in order (what FTS5 indexes)."""
    return [stem(t) for t in tokens(text or "")]


def counted(text: str) -> tuple[Counter[str], int]:
    """(term frequencies, document length in tokens)."""
    lx = lexemes(text)
    return Counter(lx), len(lx)
