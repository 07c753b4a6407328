"""Proving forgotten text is gone: redacting the engine's own files and scanning raw bytes.

The scan looks for every forgotten text whole, for each of its 12-byte windows (any substring
of 12+ characters contains one), in UTF-8 in every form it may be written (engine/forget/fold.py:
as given, NFC/NFD/NFKC, lower, upper, case-folded, full-width), and for its words of 6+
characters (the terms an FTS segment keeps, lower-cased). A piece of 3 to 5 characters (a PIN, a
code) is looked for as a whole token (scan.bounded); a piece shorter than 3 characters cannot be
told from other bytes, and verification says "not checked" for it instead of counting it clean.
A window or word that live records still hold (another memory saying "the user prefers") is not
distinctive and is skipped,
except for a forget-by-query's query text, which must occur nowhere. The file scan runs in a
child process (engine/forget/scan.py says why: this process must never open and close the
database's files while its connection lives).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.forget.fold import fold, fold_map, forms
from engine.forget.scan import HEX_RUN, W, bounded, bounded_at, find, positions

MIN_WHOLE = 6  # shorter texts are looked for as whole tokens only (a substring would hit anything)
MIN_PIECE = 3  # shorter pieces ("42", initials) cannot be scanned without false hits: said so
REDACTED = "[forgotten]"
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
_GAP = " \t-,.;:'\"/()"
_TOKEN = re.compile(r"[^\W_]{6,}", re.UNICODE)


def encoded(text: str) -> bytes:
    """The bytes a text has in the file. A row holding invalid UTF-8 is read with surrogateescape
    (the store's eraser, `tolerant`), which gives its bytes back exactly."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def valid(text: str) -> str:
    """`text` as valid UTF-8 to write back (a malformed row's stray bytes become U+FFFD)."""
    return encoded(text).decode("utf-8", "replace")


def _variants(text: str) -> list[str]:
    return sorted(forms(text) | forms(" ".join(text.split())))


def byte_windows(texts: list[str]) -> tuple[set[bytes], set[bytes], set[bytes]]:
    """(12-byte windows, whole texts shorter than a window, short pieces looked for as tokens) of
    the texts, in every written form, as stored bytes."""
    wins: set[bytes] = set()
    short: set[bytes] = set()
    pieces: set[bytes] = set()
    for t in texts:
        for v in _variants(t):
            b = encoded(v)
            if len(b) >= W:
                wins.update(b[i : i + W] for i in range(len(b) - W + 1))
            elif len(v.strip()) >= MIN_WHOLE:
                short.add(b)
            elif len(v.strip()) >= MIN_PIECE:
                pieces.add(encoded(v.strip()))
    return wins, short, pieces


def too_short(texts: list[str]) -> list[int]:
    """Lengths of the texts too short to scan for at all (1 or 2 characters)."""
    return sorted({len(t.strip()) for t in texts if 0 < len(t.strip()) < MIN_PIECE})


def tokens(texts: list[str]) -> set[bytes]:
    """Lower-cased words of 6+ characters: what an FTS index stores of a text (its terms), too short
    for a window but distinctive enough that an old segment keeping them would show."""
    return {m.group(0).lower().encode("utf-8") for t in texts for m in _TOKEN.finditer(t)}


@dataclass
class Targets:
    wins: set[bytes]  # 12-byte windows
    short: set[bytes]  # whole texts shorter than a window
    terms: set[bytes]  # lower-cased words, counted only where they stand alone
    skipped: int  # candidates skipped because live text still holds them
    pieces: set[bytes] = field(default_factory=set)  # 3-5 characters, counted as whole tokens
    unchecked: list[str] = field(default_factory=list)  # pieces not scanned for, and why

    @property
    def count(self) -> int:
        return len(self.wins) + len(self.short) + len(self.terms) + len(self.pieces)


def targets(live_texts: Callable[[], list[str]], texts: list[str], strict: list[str]) -> Targets:
    """What to look for: distinctive windows, short wholes and terms of the forgotten texts, and
    everything of a forget-by-query's query text (`strict`). `live_texts()`: what live records
    still hold (the store's eraser reads it; only called when there is something to compare)."""
    from engine.curator.report import boilerplate

    wins, short, pieces = byte_windows(texts)
    terms = tokens(texts)
    skipped = 0
    unchecked = [f"not checked: piece too short ({n} chars)" for n in too_short(texts + strict)]
    if wins or short or terms or pieces:
        live = "\n".join(live_texts()) + "\n" + boilerplate()
        blob = encoded(live + "\n" + live.lower())
        _, common = find(blob, wins)
        kept_short = {x for x in short if x not in blob}
        kept_terms = {x for x in terms if x not in blob}
        # A short piece a live record also holds cannot be told apart from it: said, not hidden.
        held = {x for x in pieces if bounded(blob, x)}
        unchecked += [f"not checked: piece held by live records ({len(x.decode('utf-8', 'replace'))} chars)"
                      for x in sorted(held)]  # fmt: skip
        skipped = len(common) + len(short) - len(kept_short) + len(terms) - len(kept_terms) + len(held)
        wins, short, terms, pieces = wins - common, kept_short, kept_terms, pieces - held
    sw, ss, sp = byte_windows(strict)
    return Targets(wins | sw, short | ss, terms, skipped, pieces | sp, sorted(set(unchecked)))


# -- redacting the engine's files ------------------------------------------------------------------
@dataclass
class Secrets:
    """The forgotten texts, folded (engine/forget/fold.py) and prepared for redaction: 12-character
    windows, short wholes, short pieces (redacted where they stand as whole tokens), words."""

    wins: set[str]
    short: set[str]
    words: set[str]
    pieces: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.wins or self.short or self.pieces)


def char_windows(texts: list[str]) -> Secrets:
    sec = Secrets(set(), set(), set())
    for t in texts:
        for v in {fold(t), fold(" ".join(t.split()))}:
            if len(v) >= W:
                sec.wins.update(v[i : i + W] for i in range(len(v) - W + 1))
            elif len(v.strip()) >= MIN_WHOLE:
                sec.short.add(v)
            elif len(v.strip()) >= MIN_PIECE:
                sec.pieces.add(v.strip())
    sec.words = {m.group(0).lower() for t in texts for m in _WORDS.finditer(t)}
    return sec


def token_at(hay: str, j: int, n: int) -> bool:
    """Is hay[j:j+n] a whole token (scan.bounded's rule, on the text's UTF-8)?"""
    start = max(0, j - HEX_RUN)
    before = encoded(hay[start:j])
    return bounded_at(encoded(hay[start : j + n + HEX_RUN]), len(before), len(encoded(hay[j : j + n])))


def redact(text: str, sec: Secrets) -> str:
    """Replace every stretch of `text` covered by a forgotten window (or short whole) with a marker,
    and grow each stretch over neighbouring words the forgotten text also holds (so an earlier
    redaction that split a sentence leaves no stray word of it next to its marker)."""
    if not text:
        return text
    covered = bytearray(len(text))
    hay, at = fold_map(text)  # matched folded; marked on the characters they came from
    hit = False

    def mark(j: int, n: int) -> None:
        a, b = at[j][0], at[j + n - 1][1]
        covered[a:b] = b"\x01" * (b - a)

    if len(hay) >= W and sec.wins:
        for i in range(len(hay) - W + 1):
            if hay[i : i + W] in sec.wins:
                mark(i, W)
                hit = True
    for s in sec.short | sec.pieces:
        j = hay.find(s)
        while j >= 0:
            if s in sec.short or token_at(hay, j, len(s)):
                mark(j, len(s))
                hit = True
            j = hay.find(s, j + 1)
    if not hit and REDACTED not in text:
        return text
    j = text.find(REDACTED)
    while j >= 0:  # earlier markers join the stretches
        covered[j : j + len(REDACTED)] = b"\x01" * len(REDACTED)
        j = text.find(REDACTED, j + 1)
    markers = bytes(covered)
    _grow(text, covered, sec.words)
    if not hit and bytes(covered) == markers:
        return text
    out, i = [], 0
    while i < len(text):
        if covered[i]:
            while i < len(text) and covered[i]:
                i += 1
            out.append(REDACTED)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _grow(text: str, covered: bytearray, words: set[str]) -> None:
    spans = [m.span() for m in _WORDS.finditer(text) if m.group(0).lower() in words]
    changed = True
    while changed:
        changed = False
        for a, b in spans:
            if covered[a]:
                continue
            left, right = a - 1, b
            while left >= 0 and text[left] in _GAP and not covered[left]:
                left -= 1
            while right < len(text) and text[right] in _GAP and not covered[right]:
                right += 1
            if (left >= 0 and covered[left]) or (right < len(text) and covered[right]):
                covered[a:b] = b"\x01" * (b - a)
                changed = True


def walk_strings(obj, fn):
    """`obj` with `fn` applied to every string inside it (JSON-shaped values)."""
    if isinstance(obj, str):
        return fn(obj)
    if isinstance(obj, list):
        return [walk_strings(v, fn) for v in obj]
    if isinstance(obj, dict):
        return {k: walk_strings(v, fn) for k, v in obj.items()}
    return obj


def redact_json_text(raw: str, sec: Secrets) -> str:
    """Redact inside a JSON document's strings (escapes would hide text from a plain replace)."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return redact(raw, sec)
    if not isinstance(doc, (dict, list)):
        return redact(raw, sec)
    new = walk_strings(doc, lambda s: redact(s, sec))
    return raw if new == doc else json.dumps(new, ensure_ascii=False, indent=2)


def redact_reports(db_path: Path, texts: list[str]) -> int:
    """Rewrite each curator report that holds forgotten text. Returns how many changed."""
    from engine.curator.report import rewrite_reports

    sec = char_windows(texts)
    if not sec:
        return 0
    return rewrite_reports(
        db_path, lambda p, raw: redact_json_text(raw, sec) if p.suffix == ".json" else redact(raw, sec)
    )


def rows_containing(values: list[str], texts: list[str]) -> set[int]:
    """Indexes of `values` that hold a forgotten window, short whole or short piece (as a token), in
    any form (folded values against folded texts too): one vectorized pass over all of them, so
    scrubbing a million audit rows does not run a Python loop per character."""
    wins, short, pieces = byte_windows(texts)
    if not values or not (wins or short or pieces):
        return set()
    hits: set[int] = set()
    for enc in ([encoded(v) for v in values], [encoded(fold(v)) for v in values]):
        starts = np.cumsum([0] + [len(b) + 1 for b in enc[:-1]])
        blob = b"\x00".join(enc)
        for data in (blob, blob.lower()):
            at = positions(data, wins)[0].tolist()
            for s in short | pieces:
                j = data.find(s)
                while j >= 0:
                    if s in short or bounded(data[max(0, j - 1) : j + len(s) + 1], s):
                        at.append(j)
                    j = data.find(s, j + 1)
            if at:
                hits |= set((np.searchsorted(starts, np.asarray(at), side="right") - 1).tolist())
    return hits
