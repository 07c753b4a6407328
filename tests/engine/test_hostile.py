"""Hostile input: arbitrary Unicode (lone surrogates included), NUL, huge strings, FTS5 syntax and
SQL-looking text through the public API. Nothing may escape but engine.errors types; what is
accepted is stored exactly; the CLI answers with one line, never a traceback (test_hostile_cli).
The hostile text itself is tests/engine/hostile_text.py."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import EngineError, HashEmbedder, InvalidInput, SearchResult, open_engine
from tests.engine.hostile_text import ANY_CHAR, HOSTILE, NASTY, hostile_text


def _bad_unicode(s: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


@pytest.fixture(scope="module")
def heng(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "h.db"
    e = open_engine(path, embedder=HashEmbedder(), actor="hostile")
    sid = e.sessions.add("s-hostile", agent="a")
    e.sessions.add_messages(sid, [{"content": "the deploy runs on fridays"}, {"content": "日本語の記憶"}])
    for t in ("the deploy runs on fridays", "backups are verified nightly", "記憶の検索"):
        e.add_memory(t)
    yield e
    e.close()


def _only_engine_errors(fn, *a, **k):
    try:
        return fn(*a, **k)
    except EngineError as exc:
        assert str(exc), "an engine error must say what is wrong"
        return exc


@HOSTILE
@given(
    q=hostile_text,
    mode=st.sampled_from([None, "keyword", "vector", "hybrid"]),
    tier=st.sampled_from([None, "all", "archived", "core,active"]),
)
def test_search_never_raises_on_odd_text(heng, q, mode, tier):
    r = heng.search(q, k=5, mode=mode, tier=tier)
    assert isinstance(r, SearchResult) and len(r.hits) <= 5


@HOSTILE
@given(q=hostile_text, session=st.one_of(st.none(), hostile_text), agent=st.one_of(st.none(), hostile_text))
def test_message_search_never_raises(heng, q, session, agent):
    hits = _only_engine_errors(heng.sessions.search_messages, q, session_id=session, agent=agent)
    if not isinstance(hits, EngineError):
        assert all(h.message.session_id for h in hits)


@HOSTILE
@given(content=hostile_text, agent=hostile_text, category=hostile_text)
def test_add_memory_stores_exactly_or_refuses_cleanly(heng, content, agent, category):
    r = _only_engine_errors(heng.memories.add_ex, content, agent=agent, category=category, dedup=False)
    if _bad_unicode(content + agent + category) or "\x00" in content + agent + category:
        assert isinstance(r, InvalidInput)
    if isinstance(r, EngineError):
        assert isinstance(r, InvalidInput)
        return
    m = heng.memories.get(r.id)
    assert (m.content, m.agent, m.category) == (content, agent, category or "general")


@HOSTILE
@given(content=hostile_text, role=st.sampled_from(["user", "tool", "bogus", ""]))
def test_add_message_stores_exactly_or_refuses_cleanly(heng, content, role):
    r = _only_engine_errors(heng.sessions.add_message, "s-hostile", role, content)
    if isinstance(r, EngineError):
        assert isinstance(r, InvalidInput)
        return
    assert heng.sessions.get_message(r).content == content


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(ANY_CHAR, max_size=20),
    st.sampled_from(NASTY),
)
json_value = st.recursive(
    json_leaf,
    lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=5), ch, max_size=3),
    max_leaves=6,
)
FIELDS = [
    "id",
    "session_id",
    "role",
    "content",
    "agent",
    "user",
    "title",
    "metadata",
    "at",
    "started_at",
    "created_at",
    "kind",
    "tier",
    "category",
    "importance",
    "token_count",
    "tool_name",
    "pinned",
    "message_id",
    "parent_session_id",
    "source",
    "model",
]
record = st.fixed_dictionaries(
    {"type": st.sampled_from(["session", "message", "memory", "other"])},
    optional={f: st.one_of(json_value, st.sampled_from(["s-hostile", "x"])) for f in FIELDS},
)
line = st.one_of(
    record.map(lambda r: json.dumps(r, ensure_ascii=True)),  # \ud800 escapes survive
    st.text(ANY_CHAR, max_size=30).map(
        lambda t: t.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    ),
)


@HOSTILE
@given(lines=st.lists(line, min_size=1, max_size=6), raw=st.binary(max_size=20))
def test_ingest_refuses_bad_files_with_engine_errors(heng, tmp_path_factory, lines, raw):
    f = tmp_path_factory.mktemp("ingest") / "in.jsonl"
    f.write_bytes("\n".join(lines).encode("utf-8") + b"\n" + raw)
    r = _only_engine_errors(heng.importers.ingest, f, dedup=False)
    if not isinstance(r, EngineError):
        assert sum(r["added"].values()) >= 0


@HOSTILE
@given(mid=st.one_of(st.integers(), st.text(ANY_CHAR, max_size=10), st.floats(), st.none()))
def test_ids_of_any_shape_are_not_found_or_invalid(heng, mid):
    for fn in (heng.memories.get, heng.sessions.get_message, heng.sessions.get, heng.memories.pin):
        r = _only_engine_errors(fn, mid)
        assert isinstance(r, EngineError) or r is not None


odd = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    st.booleans(),
    hostile_text,
    st.lists(st.sampled_from(["core", "active", "archived", "x"]), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@HOSTILE
@given(
    k=st.one_of(st.integers(1, 20), odd),
    tier=odd,
    kind=st.one_of(st.none(), odd),
    category=odd,
    agent=odd,
    user=odd,
    mode=st.one_of(st.sampled_from([None, "keyword"]), odd),
)
def test_search_parameters_of_any_shape(heng, k, tier, kind, category, agent, user, mode):
    r = _only_engine_errors(
        heng.search,
        "deploy",
        k=k,
        tier=tier,
        kind=kind,
        category=category,
        agent=agent,
        user=user,
        mode=mode,
        record_access=False,
    )
    assert isinstance(r, (SearchResult, InvalidInput)), r


@HOSTILE
@given(
    importance=st.one_of(st.just(0.5), odd),
    kind=st.one_of(st.just("semantic"), odd),
    tier=st.one_of(st.just("active"), odd),
    metadata=st.one_of(st.just({}), odd),
    pinned=odd,
    session_id=odd,
    message_id=odd,
)
def test_add_memory_fields_of_any_shape(
    heng, importance, kind, tier, metadata, pinned, session_id, message_id
):
    r = _only_engine_errors(
        heng.memories.add_ex,
        "a field test",
        importance=importance,
        kind=kind,
        tier=tier,
        metadata=metadata,
        pinned=pinned,
        session_id=session_id,
        message_id=message_id,
        dedup=False,
    )
    assert isinstance(r, InvalidInput) or heng.memories.get(r.id).content == "a field test"


@HOSTILE
@given(
    body=st.one_of(
        st.text(ANY_CHAR, max_size=200),
        st.lists(
            st.sampled_from(["# Heading", "- item", "§", "\x00", "```", "* * *", "---", "\ud800", *NASTY]),
            max_size=12,
        ).map("\n".join),
    ),
    agent=hostile_text,
)
def test_markdown_import_of_any_text(heng, tmp_path_factory, body, agent):
    f = tmp_path_factory.mktemp("md") / "MEMORY.md"
    f.write_bytes(body.encode("utf-8", "surrogatepass"))
    _only_engine_errors(heng.importers.markdown, f, agent=agent)


def test_huge_inputs(heng, tmp_path):
    big = "deploy " * 200_000  # 1.4 MB
    # keyword mode: the test embedder hashes every trigram, slow at 1 MB (MiniLM truncates)
    assert isinstance(heng.search(big, k=3, mode="keyword"), SearchResult)
    assert isinstance(heng.sessions.search_messages(big), list)
    with pytest.raises(InvalidInput, match="limit"):
        heng.add_memory(big)
    with open_engine(tmp_path / "big.db", embedder=None) as e:  # no embedder: fast at 1 MB
        mid = e.add_memory("x" * 999_999, dedup=False)  # just under the limit: stored whole
        assert len(e.memories.get(mid).content) == 999_999
        with pytest.raises(InvalidInput, match="limit"):
            e.sessions.add_message(e.sessions.add("s"), "user", "y" * 1_000_001)


def test_sql_looking_text_is_data(eng):
    evil = "'); DROP TABLE memories; --"
    other = eng.add_memory("the deploy runs on fridays")
    mid = eng.add_memory(evil, dedup=False)
    assert eng.memories.get(mid).content == evil
    assert [h.id for h in eng.search("DROP TABLE memories", mode="keyword").hits] == [mid]
    assert [h.id for h in eng.search(evil, mode="keyword").hits] == [mid]
    assert eng.memories.get(other).content == "the deploy runs on fridays"
    assert eng.health.doctor().ok


@pytest.mark.parametrize(
    "bad",
    [
        '{"type": "message", "session_id": "new-s", "role": "bogus", "content": "x"}',
        '{"type": "message", "session_id": "new-s", "token_count": "many", "content": "x"}',
        '{"type": "memory", "content": "fine", "created_at": [1]}',
        '{"type": "session", "id": "other", "metadata": "not an object"}',
        '{"type": "memory", "content": "lone \\ud800 surrogate"}',
    ],
)
def test_ingest_writes_nothing_when_a_later_line_is_bad(eng, tmp_path, bad):
    from engine import ImportFailed

    f = tmp_path / "in.jsonl"
    f.write_text(
        '{"type": "session", "id": "new-s", "title": "fine"}\n'
        '{"type": "memory", "content": "a fine memory"}\n' + bad + "\n"
    )
    with pytest.raises(ImportFailed, match=r"in\.jsonl:3: "):
        eng.importers.ingest(f)
    assert eng.counts().sessions == 0 and eng.memories.list() == []


COLUMNS = {
    "memory": ["id", "content", "kind", "tier", "agent", "importance", "embedded", "metadata"],
    "session": ["id", "agent", "started_at", "metadata"],
    "message": ["id", "session_id", "role", "content", "at"],
    "rule": ["id", "text", "score", "status"],
    "audit": ["id", "at", "actor", "action", "hash"],
}
fidelity_record = st.sampled_from(sorted(COLUMNS) + ["nonsense"]).flatmap(
    lambda t: st.fixed_dictionaries(
        {
            "type": st.just(t),
            "row": st.dictionaries(
                st.sampled_from(COLUMNS.get(t, ["x"]) + ["'; DROP TABLE memories; --"]),
                json_value,
                max_size=5,
            ),
        },
        optional={"vector": st.one_of(st.text(max_size=8), st.just("AAAA"))},
    )
)


@HOSTILE
@given(records=st.lists(fidelity_record, max_size=5))
def test_full_fidelity_import_refuses_bad_records_with_engine_errors(heng, tmp_path_factory, records):
    from engine.importers.jsonl_io import FORMAT, VERSION

    f = tmp_path_factory.mktemp("fidelity") / "export.jsonl"
    lines = [json.dumps({"type": "header", "format": FORMAT, "version": VERSION})]
    lines += [json.dumps(r, ensure_ascii=True) for r in records]
    f.write_text("\n".join(lines) + "\n")
    before = heng.counts()
    r = _only_engine_errors(heng.importers.jsonl, f)
    if isinstance(r, EngineError):
        assert heng.counts() == before  # one transaction: all or nothing


def test_database_is_sound_after_all_that(heng):
    """Last in this file: whatever the engine accepted above left a consistent database."""
    report = heng.health.doctor()
    assert report.ok, [(c.name, c.detail) for c in report.problems]
