"""The services' portable SQL, as psycopg wants it.

Services write SQLite-flavoured parameters (`?`, `:name`); psycopg takes `%s` / `%(name)s` and reads
every `%` as a placeholder. Translation walks the text once, leaving string literals, quoted
identifiers and comments alone (a `?` inside `'...'` stays a question mark), doubles every other
`%` (a `%s` or `%(name)s` already there is the adapter's own native SQL, kept as it is), and
bridges the two SQLite-isms that would otherwise give silently different answers on PostgreSQL:

- the column `user` (a reserved word there: a bare `user` is CURRENT_USER) is quoted;
- `LIKE` becomes `ILIKE` (SQLite's LIKE ignores ASCII case, PostgreSQL's does not).
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_WORD_CHARS = _WORD_START | frozenset("0123456789$")
_NATIVE_NAMED = re.compile(r"%\(\w+\)s")


@lru_cache(maxsize=4096)
def translate(sql: str) -> tuple[str, bool]:
    """(psycopg SQL, whether it uses named parameters)."""
    out: list[str] = []
    named = False
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "'" or c == '"':  # a literal or a quoted identifier: copied, only % doubled
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:  # '' inside a literal
                        j += 2
                        continue
                    break
                j += 1
            out.append(sql[i : j + 1].replace("%", "%%"))
            i = j + 1
        elif c == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
            out.append(sql[i:j].replace("%", "%%"))
            i = j
        elif c == "?":
            out.append("%s")
            i += 1
        elif c == "%" and sql.startswith("%s", i) and (i + 2 == n or sql[i + 2] not in _WORD_CHARS):
            out.append("%s")  # a native fragment (the adapter's own, e.g. a filter) inside: kept
            i += 2
        elif c == "%" and (m := _NATIVE_NAMED.match(sql, i)):
            out.append(m.group())
            named = True
            i = m.end()
        elif c == "%":
            out.append("%%")
            i += 1
        elif c == ":" and i + 1 < n and sql[i + 1] in _WORD_START and (i == 0 or sql[i - 1] != ":"):
            j = i + 1
            while j < n and sql[j] in _WORD_CHARS:
                j += 1
            out.append(f"%({sql[i + 1 : j]})s")
            named = True
            i = j
        elif c == ":" and i + 1 < n and sql[i + 1] == ":":  # a cast
            out.append("::")
            i += 2
        elif c in _WORD_START and (i == 0 or sql[i - 1] not in _WORD_CHARS):
            j = i + 1
            while j < n and sql[j] in _WORD_CHARS:
                j += 1
            word = sql[i:j]
            low = word.lower()
            if low == "user":
                out.append('"user"')
            elif low == "like":
                out.append("ILIKE")
            else:
                out.append(word)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out), named
