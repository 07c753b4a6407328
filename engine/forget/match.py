"""How a forget-by-query decides that a text is in scope: one matcher, used by the preview and by
the execution alike (SQL may prefilter rows; this decides).

Modes (issue #25):
- `word` (the default): every word of the query stands in the text as a whole word, in any order.
  "Sam" matches "Sam", "SAM", "sam's" and "Sam-approved" (an apostrophe or hyphen ends a word) but
  never "sample" or "Samuel".
- `phrase`: the query's words in that order, next to each other (any run of spaces or punctuation
  between them), whole words at both ends.
- `substring`: the query anywhere, inside words too (the old behaviour; "Sam" sweeps "sample").

Every mode compares text folded the same way (engine/forget/fold.py: NFKC, case-folded), so
"ＳＡＭ" and "Zoë"/"ZOË" match as the operator expects. Words are Unicode letters and digits; an
underscore joins a word (an identifier such as `sam_id` is one word). In scripts written without
spaces (Chinese, Japanese, Thai, ...) a word's edge cannot be seen, so "白马尖" matches inside
"我们去白马尖爬山"."""

from __future__ import annotations

import re
from typing import Literal, get_args

from engine.errors import InvalidInput, cut
from engine.forget.fold import fold, fold_map

MatchMode = Literal["word", "phrase", "substring"]
MATCH_MODES: tuple[str, ...] = get_args(MatchMode)
DEFAULT_MODE: MatchMode = "word"
_WORD = re.compile(r"\w+", re.UNICODE)


def check_mode(mode: str | None) -> MatchMode:
    if mode is None or mode == "":
        return DEFAULT_MODE
    if mode not in MATCH_MODES:
        raise InvalidInput(f"unknown match mode {cut(mode)}; use one of {', '.join(MATCH_MODES)}")
    return mode  # type: ignore[return-value]


class Matcher:
    """A query and its mode, compiled once. A query with nothing to match (no letter or digit, in
    word or phrase mode) raises InvalidInput here, before any row is read."""

    def __init__(self, query: str, mode: str = DEFAULT_MODE) -> None:
        self.query = query
        self.mode: MatchMode = check_mode(mode)
        # Regular expressions over folded text; a text matches when all of them find something.
        self.patterns = _patterns(query, self.mode)

    def words(self) -> list[str]:
        """The folded words the query is made of (what SQL may prefilter on, one at a time)."""
        return _WORD.findall(fold(self.query)) if self.mode != "substring" else [fold(self.query)]

    def matches(self, text: str | None) -> bool:
        if not isinstance(text, str) or not text:
            return False
        hay = fold(text)
        return all(p.search(hay) for p in self.patterns)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the query's words stand in `text` (spans of the original characters), for
        highlighting a preview; empty when the text does not match as a whole."""
        if not self.matches(text):
            return []
        hay, at = fold_map(text)
        out = []
        for p in self.patterns:
            for m in p.finditer(hay):
                if m.end() > m.start():
                    out.append((at[m.start()][0], at[m.end() - 1][1]))
        return sorted(set(out))


def _patterns(query: str, mode: MatchMode) -> list[re.Pattern[str]]:
    q = fold(query)
    if mode == "substring":
        forms = dict.fromkeys([q, " ".join(q.split())])
        return [re.compile("|".join(re.escape(f) for f in forms))]
    words = _WORD.findall(q)
    if not words:
        raise InvalidInput("a forget query in word or phrase mode needs at least one letter or digit")
    if mode == "phrase":
        return [_bounded(r"\W+".join(re.escape(w) for w in words), words[0], words[-1])]
    return [_bounded(re.escape(w), w, w) for w in dict.fromkeys(words)]


# Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Myanmar):
# there a word's edge cannot be told from the text, so their characters match where they stand.
_SPACELESS = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x3040, 0x30FF), (0x31F0, 0x31FF),
              (0x3400, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))  # fmt: skip


def _spaceless(ch: str) -> bool:
    return any(lo <= ord(ch) <= hi for lo, hi in _SPACELESS)


def _bounded(body: str, first: str, last: str) -> re.Pattern[str]:
    before = "" if _spaceless(first[0]) else r"(?<!\w)"
    after = "" if _spaceless(last[-1]) else r"(?!\w)"
    return re.compile(before + body + after)


def context(text: str, spans: list[tuple[int, int]], width: int = 160) -> tuple[str, list[tuple[int, int]]]:
    """A window of `text` (whitespace collapsed to single spaces) around its first match, at most
    `width` characters, with the matched spans moved into it: what a preview row shows."""
    flat: list[str] = []
    pos: list[int] = []  # flat, pos: the collapsed text and, per character, its index in `text`
    prev_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if prev_space or not flat:
                continue
            flat.append(" ")
            pos.append(i)
            prev_space = True
        else:
            flat.append(ch)
            pos.append(i)
            prev_space = False
    s = "".join(flat).rstrip()
    mapped = []
    for a, b in spans:
        na = next((k for k, p in enumerate(pos) if p >= a), len(s))
        nb = next((k for k, p in enumerate(pos) if p >= b), len(s))
        if nb > na:
            mapped.append((na, min(nb, len(s))))
    if len(s) <= width:
        return s, mapped
    first = mapped[0][0] if mapped else 0
    start = max(0, min(first - width // 4, len(s) - width))
    prefix = "…" if start else ""
    window = s[start : start + width - len(prefix)]
    if start + len(window) < len(s):
        window = window[:-1] + "…"
    shift = len(prefix) - start
    shown = [(a + shift, min(b + shift, len(prefix) + len(window)))
             for a, b in mapped if a >= start and a + shift < len(prefix) + len(window)]  # fmt: skip
    return prefix + window, shown
