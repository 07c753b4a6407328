"""Issue 22 (Trust), inputs: full-width, half-width and other compatibility forms in queries never
build SQL the database refuses, on either backend; every query path reads the same normal form."""

from __future__ import annotations

import functools
import json
import os
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import EngineError, HashEmbedder, open_engine
from engine.retrieval.query import normalise_query, plan

pytestmark = pytest.mark.backends

FUZZ = settings(
    deadline=None,
    max_examples=int(os.environ.get("MEMCONSOLE_HYPOTHESIS_EXAMPLES", 200)),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# What Japanese and Chinese keyboards type (full-width Latin and punctuation, half-width katakana,
# the ideographic space), CJK, combining marks, NUL, quotes and FTS / tsquery / LIKE syntax.
FULL_WIDTH = st.characters(min_codepoint=0xFF01, max_codepoint=0xFF5E)
HALF_KANA = st.characters(min_codepoint=0xFF61, max_codepoint=0xFF9F)
SYNTAX = st.sampled_from(list("\"'*^:(){}+-%_\\&|!<>@ \x00\u3000") + ["AND", "OR", "NOT", "NEAR", "''", '""'])
CATEGORIES = st.characters(
    categories=["L", "M", "N", "P", "S", "Z", "Cc", "Cf"], codec="utf-8"
)  # every kind of character but surrogates and unassigned
PIECE = st.one_of(
    st.text(FULL_WIDTH, min_size=1, max_size=6),
    st.text(HALF_KANA, min_size=1, max_size=6),
    st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x4E40), min_size=1, max_size=4),
    st.text(st.characters(categories=["Mn", "Me", "Mc"]), min_size=1, max_size=3),
    st.text(CATEGORIES, max_size=8),
    SYNTAX,
)
QUERY = st.lists(PIECE, min_size=1, max_size=6).map("".join)


class Refusals:
    """Every error the database raised under the keyword side, recorded (the retriever turns them
    into 'no hits', which would hide SQL the database refused)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def watch(self, obj: Any, names: list[str]) -> None:
        for name in names:
            setattr(obj, name, self._wrap(getattr(obj, name)))

    def _wrap(self, fn: Any) -> Any:
        @functools.wraps(fn)
        def call(*a: Any, **k: Any) -> Any:
            try:
                return fn(*a, **k)
            except Exception as exc:
                self.seen.append(f"{fn.__name__}: {type(exc).__name__}: {exc}")
                raise

        return call


@pytest.fixture
def watched(db_path, clock) -> Iterator[tuple[Any, Refusals]]:
    e = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="fuzz")
    sid = e.sessions.add("s1", agent="a")
    e.sessions.add_messages(sid, [{"content": "会議は月曜日 ABC deploy"}, {"content": "カタカナ テスト"}])
    for t in ("会議は月曜日に東京で", "ABC deploy on fridays", "カタカナのテスト", "数据库备份"):
        e.add_memory(t)
    r = Refusals()
    r.watch(
        e.store.keyword, ["doc_freq", "top", "top_where", "passing", "rank_of", "score_of", "has", "messages"]
    )
    r.watch(e.store, ["read", "read_one"])
    yield e, r
    e.close()


@FUZZ
@given(q=QUERY)
def test_compatibility_forms_never_build_sql_the_database_refuses(watched, q):
    eng, refusals = watched
    for mode in ("keyword", None):
        res = eng.search(q, k=5, mode=mode)
        assert len(res.hits) <= 5
    eng.sessions.search_messages(q, limit=5)
    try:
        eng.explain(q, 1, k=5)
    except EngineError as exc:  # a clean refusal is one line
        assert "\n" not in str(exc)
    assert not refusals.seen, (q, refusals.seen)


def test_full_width_and_half_width_queries_find_what_ascii_and_kana_find(watched):
    eng, refusals = watched
    ascii_ids = [h.id for h in eng.search("ABC deploy", k=5, mode="keyword").hits]
    wide = "ＡＢＣ　ｄｅｐｌｏｙ"  # the same words typed on a Japanese keyboard
    assert [h.id for h in eng.search(wide, k=5, mode="keyword").hits] == ascii_ids and ascii_ids
    kana = [h.id for h in eng.search("カタカナ", k=5, mode="keyword").hits]
    assert [h.id for h in eng.search("ｶﾀｶﾅ", k=5, mode="keyword").hits] == kana and kana
    assert [h.message.content for h in eng.sessions.search_messages("ｶﾀｶﾅ")] == ["カタカナ テスト"]
    assert eng.sessions.search_messages("ＡＢＣ") and not refusals.seen


def test_one_normal_form_for_every_plan():
    assert normalise_query("ＡＢＣ\x00ｶﾀｶﾅ\ud800") == "ABC カタカナ?"
    for q in ("＂", "％＿", "（（（", "ｘ：ｙ", "！", "ﾞ"):
        p = plan(q)
        assert p.index == "none" or p.like or p.match, (q, p)
        assert unicodedata.is_normalized("NFKC", " ".join(p.terms))


HUGE = "ｘ" * 3_000_000  # 3 M characters (9 MB of UTF-8)


def test_error_messages_cut_echoed_values_and_name_their_length(eng, tmp_path):
    mid = eng.add_memory("a memory to refuse changes to")
    f = tmp_path / "huge.jsonl"
    f.write_text(json.dumps({"type": "session", "id": "s", "agent": "a"}) + "\n")
    f.write_text(
        f.read_text() + json.dumps({"type": "message", "session_id": "s", "role": HUGE[:500_000]}) + "\n"
    )
    calls = [
        lambda: eng.search("deploy", mode=HUGE),
        lambda: eng.search("deploy", tier=HUGE),
        lambda: eng.memories.set_tier(mid, HUGE),
        lambda: eng.memories.set_importance(mid, HUGE),
        lambda: eng.sessions.add_message("s-none", HUGE, "x"),
        lambda: eng.importers.ingest(f),
        lambda: eng.forget.run("session", [HUGE], "user asked"),
    ]
    for i, call in enumerate(calls):
        with pytest.raises(EngineError) as e:
            call()
        msg = str(e.value)
        assert len(msg) < 1_000 and "\n" not in msg and ",000 chars)" in msg, (i, msg[:300])
