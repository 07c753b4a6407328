"""The engine's own tokenizer for the keyword index: the lexemes FTS5's
`porter unicode61 remove_diacritics 2` produces, so BM25 on PostgreSQL ranks as SQLite does.

unicode61: a token is a maximal run of letters (L*), numbers (N*) and private-use characters (Co);
everything else separates. Tokens are case-folded and stripped of diacritics. porter: FTS5 passes
tokens shorter than 3 or longer than 64 bytes through unchanged and stems the rest with Martin
Porter's original algorithm (snowballstemmer's "porter" is that algorithm).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache

import snowballstemmer

_STEMMER = snowballstemmer.stemmer("porter")
PORTER_MIN, PORTER_MAX = 3, 64  # bytes, as FTS5's porter tokenizer counts them


def _token_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in "LN" or cat == "Co"


@lru_cache(maxsize=65536)
def _fold(token: str) -> str:
    decomposed = unicodedata.normalize("NFD", token.lower().replace("\u00b5", "\u03bc"))
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    size = len(token.encode("utf-8"))
    if size < PORTER_MIN or size > PORTER_MAX:
        return token
    out = str(_STEMMER.stemWord(token))
    # Porter's own C version (which FTS5 follows) has step 2's "logi" -> "log"; Snowball's does not.
    if out.endswith("logi") and len(out) > 4 and _measure(out[:-4]) > 0:
        out = out[:-1]
    return out


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in `stem`."""
    m, prev_vowel = 0, False
    for i, ch in enumerate(stem):
        vowel = ch in "aeiou" or (ch == "y" and i > 0 and stem[i - 1] not in "aeiou")
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def tokens(text: str) -> list[str]:
    """The folded, unstemmed tokens of `text` in order."""
    out: list[str] = []
    start = -1
    for i, ch in enumerate(text):
        if _token_char(ch) or (start >= 0 and unicodedata.category(ch) == "Mn"):
            if start < 0:
                start = i
        elif start >= 0:
            out.append(_fold(text[start:i]))
            start = -1
    if start >= 0:
        out.append(_fold(text[start:]))
    return [t for t in out if t]


def lexemes(text: str) -> list[str]:
    """The stemmed tokens of `text` in order (what FTS5 indexes)."""
    return [stem(t) for t in tokens(text or "")]


def counted(text: str) -> tuple[Counter[str], int]:
    """(term frequencies, document length in tokens)."""
    lx = lexemes(text)
    return Counter(lx), len(lx)
