"""Actor names: one normal form, checked, so `actor:dana` finds everything Dana did and nothing
that merely looks like her.

Every name the engine records or filters by goes through `actor_name`: the MCP token file, the
CLI's `--actor`, the engine's own default, and the audit filter. It applies NFKC (full-width
`ｄａｎａ` is `dana`), trims the ends, and refuses what a reader cannot see or tell apart:
control, format and zero-width characters (U+200B, U+200D, U+2060, U+FEFF, variation selectors,
Hangul fillers...) and letters of several scripts in one name (a Cyrillic `а` inside a Latin
name), unless the configuration allows mixed scripts. Japanese, Chinese and Korean names that mix
Han with kana, Bopomofo or Hangul (with or without Latin) are single-script names by UTS #39's
"highly restrictive" rule and pass.
"""

from __future__ import annotations

import unicodedata

from engine.errors import InvalidInput

MAX_ACTOR = 200

# Default-ignorable code points that are not in category Cf (those are refused by category).
_INVISIBLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810)]
    + [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]
)
_REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
# Script sets that read as one writing system (UTS #39 "highly restrictive").
_CJK_SETS = (
    {"LATIN", "CJK", "HIRAGANA", "KATAKANA"},
    {"LATIN", "CJK", "BOPOMOFO"},
    {"LATIN", "CJK", "HANGUL"},
)


def script_of(ch: str) -> str | None:
    """The script of a letter, from its Unicode name ("CYRILLIC SMALL LETTER A" -> CYRILLIC);
    None for what every script shares (digits, punctuation, marks)."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    name = unicodedata.name(ch, "")
    word = name.split(" ", 1)[0]
    if word in ("CJK", "IDEOGRAPHIC"):
        return "CJK"
    if word == "HALFWIDTH":  # halfwidth katakana / hangul survive NFKC only when unmapped
        return name.split(" ", 2)[1]
    return word or None


def scripts(name: str) -> set[str]:
    return {s for s in map(script_of, name) if s is not None}


def actor_name(raw: str, *, allow_mixed_script: bool = False, what: str = "actor name") -> str:
    """`raw` in its normal form, or InvalidInput saying in one line what is wrong with it."""
    if not isinstance(raw, str):
        raise InvalidInput(f"the {what} must be text")
    name = unicodedata.normalize("NFKC", raw).strip()
    if not name:
        raise InvalidInput(f"the {what} is empty")
    if len(name) > MAX_ACTOR:
        raise InvalidInput(f"the {what} is longer than {MAX_ACTOR} characters")
    for ch in name:
        if ord(ch) in _INVISIBLE or unicodedata.category(ch) in _REFUSED_CATEGORIES:
            raise InvalidInput(
                f"the {what} {name.encode('unicode_escape').decode()!r} holds an invisible or control"
                f" character (U+{ord(ch):04X})"
            )
    found = scripts(name)
    if not allow_mixed_script and len(found) > 1 and not any(found <= s for s in _CJK_SETS):
        raise InvalidInput(
            f"the {what} {name.encode('unicode_escape').decode()!r} mixes scripts"
            f" ({', '.join(sorted(found)).lower()}): a lookalike of another name is refused"
        )
    return name


def actor_filter(raw: str) -> str:
    """An `actor:` filter in the normal form names are stored in. It is not refused when it
    mixes scripts or hides characters: it simply matches no recorded name."""
    return unicodedata.normalize("NFKC", raw).strip()
