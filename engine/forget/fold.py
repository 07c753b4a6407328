"""One Unicode normalisation for everything a forget compares: NFKC, then case folding.

"ＺＯË ＭÜＬＬＥＲ", "ZOË MÜLLER", "zoe\u0308 müller" and "Zoë Müller" all fold to "zoë müller", so
the query scope, the redaction of quotes and the re-verification compare folded text. The byte
scan cannot fold a file's bytes, so it looks for the UTF-8 bytes of every written form instead
(`forms`): as given, NFC, NFD, NFKC, lower, upper, case-folded and full-width.
"""

from __future__ import annotations

import unicodedata

_FULL = {c: c + 0xFEE0 for c in range(0x21, 0x7F)} | {0x20: 0x3000}  # ASCII -> full-width forms


def fold(text: str) -> str:
    """NFKC, case-folded, then NFC again (case folding can leave a sequence to recompose)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFKC", text).casefold())


def fold_map(text: str) -> tuple[str, list[tuple[int, int]]]:
    """`fold(text)` cluster by cluster (a character and its combining marks), with the span of
    `text` each folded character came from: a match in the folded text marks the original span."""
    if text.isascii():  # the common case, one C call: NFKC leaves ASCII alone, casefold is lower
        return text.lower(), [(i, i + 1) for i in range(len(text))]
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        j = i + 1
        while j < len(text) and unicodedata.combining(text[j]):
            j += 1
        f = fold(text[i:j])
        out.append(f)
        spans += [(i, j)] * len(f)
        i = j
    return "".join(out), spans


def forms(text: str) -> set[str]:
    """The ways `text` may be written in a file: as given, composed, decomposed, compatibility-
    normalised, lower-, upper- and case-folded, and in full-width letters."""
    out = set()
    for base in {text, unicodedata.normalize("NFC", text), unicodedata.normalize("NFKC", text)}:
        for v in (base, base.lower(), base.upper(), base.casefold()):
            out |= {v, unicodedata.normalize("NFD", v), unicodedata.normalize("NFC", v)}
    out |= {v.translate(_FULL) for v in list(out)}
    return {v for v in out if v}
