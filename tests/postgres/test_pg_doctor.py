"""doctor on a PostgreSQL server: the server checks (pgvector, generation, tables/indexes/triggers,
privileges, the change counter), the keyword index against its rows and against the tokenizer,
vectors against memories, repair, the CLI, and the refusal of a database pgvector cannot go into."""

from __future__ import annotations

import json

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from console.cli import main
from engine import FixedClock, HashEmbedder, open_engine
from engine.errors import EngineError
from tests.direct_sql import direct

T0 = "2026-01-01T00:00:00Z"


def _open(url, **kw):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="doc", load="now", **kw)


def _as(url: str, role: str) -> str:
    d = conninfo_to_dict(url)
    return f"postgresql://{role}@/{d['dbname']}?host={d['host']}"


def _checks(report):
    return {c.name: c for c in report.checks}


@pytest.fixture
def own_db(pg_server):
    """A database of its own (these tests damage the schema, which a shared one must not keep)."""
    url = pg_server.fresh()
    yield url
    pg_server.drop(url)


def _fill(e):
    ids = [e.add_memory(f"the deploy window for service {i} is friday", dedup=False) for i in range(5)]
    e.rules.add("never deploy on friday", score=7)
    return ids


def test_a_healthy_server_database_passes_every_check(pg_db):
    e = _open(pg_db)
    try:
        _fill(e)
        r = e.health.doctor()
    finally:
        e.close()
    assert r.ok, [(c.name, c.detail) for c in r.problems]
    got = _checks(r)
    assert got["server"].ok and got["server"].detail == "ok"
    assert "sqlite-integrity" not in got
    assert got["fts-ids:memories_words"].detail == "5 indexed = 5 rows"
    assert got["fts-integrity:memories_words"].ok and got["fts-integrity:rules_words"].ok
    assert r.counts["memories_vec"] == 5 and r.counts["memories"] == 5


def test_a_lost_or_wrong_keyword_entry_is_found_and_rebuilt(pg_db):
    e = _open(pg_db)
    try:
        ids = _fill(e)
        direct(e.store).execute("DELETE FROM fts_docs WHERE src = 'memories' AND doc_id = ?", (ids[1],))
        direct(e.store).execute("DELETE FROM fts_terms WHERE src = 'memories' AND doc_id = ?", (ids[1],))
        direct(e.store).execute(
            "UPDATE fts_terms SET tf = 9 WHERE src = 'memories' AND doc_id = ?", (ids[2],)
        )
        r = e.health.doctor()
        got = _checks(r)
        assert not got["fts-ids:memories_words"].ok and got["fts-ids:memories_words"].ids == [ids[1]]
        assert not got["fts-integrity:memories_words"].ok
        assert f"ids [{ids[2]}]" in got["fts-integrity:memories_words"].detail
        assert [h.id for h in e.search("window", mode="keyword").hits].count(ids[1]) == 0
        fixed = e.health.doctor(repair=True)
        assert "rebuilt full-text indexes" in fixed.repaired
        assert fixed.ok, [(c.name, c.detail) for c in fixed.problems]
        assert ids[1] in [h.id for h in e.search("window", mode="keyword").hits]
        assert "doctor-repair" in [a.action for a in e.audit.log()]
    finally:
        e.close()


def test_missing_and_stale_vectors_are_found_and_repaired(pg_db):
    e = _open(pg_db)
    try:
        ids = _fill(e)
        direct(e.store).execute("DELETE FROM memory_vectors WHERE memory_id = ?", (ids[0],))
        direct(e.store).execute("UPDATE memory_vectors SET tier = 'core' WHERE memory_id = ?", (ids[3],))
        got = _checks(e.health.doctor())
        assert got["vectors:missing"].ids == [ids[0]] and got["vectors:metadata"].ids == [ids[3]]
        fixed = e.health.doctor(repair=True)
        assert "1 memories without a vector marked pending" in fixed.repaired
        assert "resynced filter fields of 1 vectors" in fixed.repaired
        assert "embedded 1 memories" in fixed.repaired  # the hash embedder is ready: backfilled
        assert fixed.ok, [(c.name, c.detail) for c in fixed.problems]
    finally:
        e.close()


def test_missing_indexes_and_triggers_are_named_one_line_each_and_repair_remakes_them(own_db):
    e = _open(own_db)
    try:
        _fill(e)
        direct(e.store).execute("DROP INDEX memory_vectors_hnsw")
        direct(e.store).execute("DROP TRIGGER memories_fts_aiu ON memories")
        r = e.health.doctor()
        server = [c.detail for c in r.checks if c.name == "server"]
        assert server == [
            "missing indexes: memory_vectors_hnsw",
            "missing triggers (keyword index / vector upkeep): memories_fts_aiu",
        ]
        assert not r.ok
        fixed = e.health.doctor(repair=True)
        assert fixed.repaired[0] == (
            "re-created indexes: memory_vectors_hnsw; triggers (keyword index / vector upkeep): memories_fts_aiu"
        )
        assert fixed.ok, [(c.name, c.detail) for c in fixed.problems]
        new = e.add_memory("a brand new note about kites", dedup=False)
        assert [h.id for h in e.search("kites", mode="keyword").hits] == [new]  # the trigger is back
    finally:
        e.close()


def test_a_role_without_write_privileges_is_named(own_db, pg_server):
    _open(own_db).close()
    pg_server.admin.execute("DROP ROLE IF EXISTS mc_reader")
    pg_server.admin.execute("CREATE ROLE mc_reader LOGIN")
    try:
        with psycopg.connect(own_db, autocommit=True) as c:
            c.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO mc_reader")
            c.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        e = _open(_as(own_db, "mc_reader"))
        try:
            server = [c.detail for c in e.health.doctor().checks if c.name == "server"]
        finally:
            e.close()
        assert server[0].startswith(
            "this role (mc_reader) cannot INSERT on: meta, sessions, messages, memories"
        )
        assert server[0].endswith(
            "vector_changes_pending, vector_staging, audit_heads"
        )  # every table, one line
        assert any(s.startswith("this role (mc_reader) cannot DELETE on: ") for s in server)
        assert server[-1].startswith("this role (mc_reader) cannot CREATE in schema public")
    finally:
        pg_server.drop(own_db)  # the role's grants live in that database
        pg_server.admin.execute("DROP ROLE IF EXISTS mc_reader")


def test_a_database_where_pgvector_cannot_be_installed_is_refused_with_a_clear_line(pg_url, pg_server):
    """pgvector is on this server, but a role that may not create extensions opening a database that
    lacks it gets one line saying what to ask for, and nothing is written."""
    pg_server.admin.execute("DROP ROLE IF EXISTS mc_plain")
    pg_server.admin.execute("CREATE ROLE mc_plain LOGIN")
    try:
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute("GRANT ALL ON SCHEMA public TO mc_plain")
        with pytest.raises(EngineError) as err:
            _open(_as(pg_url, "mc_plain"))
        msg = str(err.value)
        assert "pgvector is on the server but not installed in database mc_empty_" in msg
        assert "role mc_plain may not install it: ask an administrator to run CREATE EXTENSION vector" in msg
        with psycopg.connect(pg_url, autocommit=True) as c:
            tables = c.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()[0]
        assert tables == 0
    finally:
        pg_server.drop(pg_url)
        pg_server.admin.execute("DROP ROLE IF EXISTS mc_plain")


def test_cli_doctor_on_a_server_url(own_db, capsys):
    e = _open(own_db)
    _fill(e)
    e.close()
    assert main(["--db", own_db, "doctor", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and (data["checks"][0]["name"], data["checks"][0]["ok"]) == ("server", True)
    with psycopg.connect(own_db, autocommit=True) as c:
        c.execute("DROP INDEX fts_terms_doc")
    assert main(["--db", own_db, "doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  server" in out and "missing indexes: fts_terms_doc" in out
    assert out.strip().endswith("1 problem(s) found")
