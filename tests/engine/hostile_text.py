"""Hostile text for the hostile-input tests (test_hostile, test_hostile_cli): every code point
(lone surrogates and NUL included), FTS5 syntax and SQL-looking strings, and their mixtures."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Modest by default so `make test` stays fast; MEMCONSOLE_HYPOTHESIS_EXAMPLES=2000 digs deeper.
HOSTILE = settings(
    deadline=None,
    max_examples=int(os.environ.get("MEMCONSOLE_HYPOTHESIS_EXAMPLES", 60)),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

NASTY = [
    '"',
    '""',
    "*",
    "a*",
    "NEAR(a b, 2)",
    "a AND OR NOT b",
    "content:x",
    "^start",
    "{a b}: c",
    "'; DROP TABLE memories; --",
    '" OR 1=1 --',
    "1; SELECT * FROM audit",
    "\\",
    "%",
    "_",
    "%_%",
    "memories_fts MATCH 'x'",
    "(((",
    ")",
    'a"b',
    "-x",
    "+",
    "x:y:z",
    "記憶は",
    "日本",
    "키",
    "🧠💥",
    "\u202eevil",
    "e\u0301",
    "\u200b",
    "\ufeff",
    "NULL",
    "\x00",
    "\ud800",
    "a\udfffb",
    "rank:1",
    "bm25(memories_fts)",
    "SELECT sqlite_version()",
    "x' OR 'a'='a",
    "\t\n\r",
]
ANY_CHAR = st.characters(exclude_categories=[])  # every code point: surrogates, NUL, ...
hostile_text = st.one_of(
    st.text(ANY_CHAR, max_size=60),
    st.sampled_from(NASTY),
    st.lists(st.one_of(st.sampled_from(NASTY), st.text(ANY_CHAR, max_size=8)), max_size=6).map(" ".join),
)
