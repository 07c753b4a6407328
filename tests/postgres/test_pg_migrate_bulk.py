"""A migration into an empty database goes in bulk (engine/importers/migrate_bulk.py): a few
thousand rows SQLite -> PostgreSQL -> SQLite keep every row (count and content hash per table,
vectors included), the bulk copy leaves exactly what the row-by-row JSONL restore leaves, and a
row it refuses is named by the record number the export gives it, with nothing written."""

from __future__ import annotations

import hashlib
import json
import shutil

import psycopg
import pytest
import sqlean as sqlite3

from engine import FixedClock, HashEmbedder, open_engine
from engine.demo.build import write_demo
from engine.errors import ImportFailed
from engine.importers.jsonl_io import tables
from engine.importers.migrate import migrate
from tests.direct_sql import direct
from tests.pg_trgm_server import pg_trgm_server  # noqa: F401 - the fixture, for one test here

T0 = "2026-01-01T00:00:00Z"
N = 2500


def _open(where):
    return open_engine(
        where, embedder=HashEmbedder(), clock=FixedClock(T0), actor="tester", load="now", auto_backfill=False
    )


N_SMALL = 300  # the bulk-vs-row-by-row comparison in `make test` (tests/stress runs it at N)


def build_source(path, n: int, sessions: int = 20):
    with _open(path) as eng:
        write_demo(eng)  # flows, proposals, a forget case and its tombstones, rules
        eng.add_memories(
            [
                {
                    "content": f"note {i}: the deploy of service {i % 37} needs step {i % 11}",
                    "agent": f"a{i % 5}",
                }
                for i in range(n)
            ],
            dedup=False,
        )
        for s in range(sessions):
            sid = eng.sessions.add(f"bulk-{s}", agent="ops", title=f"session {s}")
            eng.sessions.add_messages(
                sid, [{"role": "user", "content": f"line {i}\twith\n \\ and 'quotes' {s}"} for i in range(30)]
            )

        def odd(conn):  # a memory without a vector and a meta row of its own
            c = direct(conn)
            c.execute("INSERT INTO memories(content, created_at, embedded) VALUES ('no vector yet', 5, 0)")
            c.execute("INSERT INTO meta(key, value) VALUES ('note', 'x')")

        eng.store.write(odd)
    return path


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return build_source(tmp_path_factory.mktemp("bulk") / "source.db", N)


@pytest.fixture(scope="module")
def small_source(tmp_path_factory):
    """The same shapes at N_SMALL memories and 4 sessions: what the row-by-row restore is compared
    with in `make test` (its per-row PostgreSQL writes took ~60 s at N on the loaded CI machine)."""
    return build_source(tmp_path_factory.mktemp("bulk-small") / "source.db", N_SMALL, sessions=4)


def _digest(where) -> dict[str, tuple[int, str]]:
    """Table -> (rows, sha256 of its rows in a backend-free form), vectors with their memory;
    the audit rows of restores left out (each migration adds its own)."""
    out = {}
    with _open(where) as eng:
        store = eng.ctx.store
        dump = store.dump
        with store.reading() as conn:
            for table, cols, _ in tables(dump, conn):
                rows = (
                    dump.memories_with_vectors(conn, cols)
                    if table == "memories"
                    else dump.rows(conn, table, cols)
                )
                lines = []
                for r in rows:
                    row = {c: r[i] for i, c in enumerate(cols)}
                    if table == "memories":
                        row["vector"] = bytes(r[len(cols)]).hex() if r[len(cols)] is not None else None
                    if table == "audit" and row["action"] == "import" and row["target_id"] == "migrate.jsonl":
                        continue
                    if table == "meta" and row["key"] in ("database_id", "pg_schema"):
                        continue  # each database's own
                    lines.append(json.dumps(row, sort_keys=True, default=repr))
                lines.sort()
                out[table] = (len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest())
    return out


def test_a_few_thousand_rows_keep_every_row_both_ways(source, pg_url, tmp_path):
    want = _digest(source)
    assert want["memories"][0] > N and want["messages"][0] > 600 and want["tombstones"][0] > 0
    there = migrate(str(source), pg_url, actor="mover")
    assert there.skipped == {} and there.vectors == want["memories"][0] - 1
    assert _digest(pg_url) == want
    back = tmp_path / "back.db"
    home = migrate(pg_url, str(back), actor="mover")
    assert home.added == {**there.added, "audit": there.added["audit"] + 1}  # the first restore's row
    assert home.vectors == there.vectors
    assert _digest(back) == want
    for where in (pg_url, back):
        with _open(where) as eng:
            assert eng.audit.verify().ok  # the chain came over whole, each restore's row linked to it
            last = direct(eng.store).one("SELECT actor, summary FROM audit ORDER BY id DESC LIMIT 1")
            assert last[0] == "mover" and json.loads(last[1]) == {
                "added": (there if where == pg_url else home).added,
                "skipped": {},
            }
            assert eng.search("service 17 step", k=3, mode="keyword").hits  # postings built on the way in
            ids = direct(eng.store).one("SELECT max(id) FROM memories")[0]
            assert eng.add_memory("zebra written after the migration") == ids + 1  # sequences moved on
            hits = eng.search("zebra", mode="keyword").hits  # the keyword index still follows writes
            assert [h.id for h in hits] == [ids + 1]
            logged = direct(eng.store).one("SELECT count(DISTINCT memory_id) FROM vector_changes")[0]
            assert logged >= there.vectors


def test_the_bulk_copy_leaves_what_the_row_by_row_restore_leaves(small_source, pg_url, pg_server, tmp_path):
    bulk_equals_row_by_row(small_source, pg_url, pg_server, tmp_path)


def bulk_equals_row_by_row(source, pg_url, pg_server, tmp_path) -> None:
    migrate(str(source), pg_url)
    other = pg_server.empty()
    try:
        with _open(source) as eng:
            eng.importers.export_jsonl(tmp_path / "migrate.jsonl")
        with _open(other) as eng:
            slow = eng.importers.jsonl(tmp_path / "migrate.jsonl")
        assert _digest(pg_url) == _digest(other)
        rows = []
        for where in (pg_url, other):
            with _open(where) as eng:
                r = direct(eng.store).one(
                    "SELECT action, target_kind, target_id, summary FROM audit ORDER BY id DESC LIMIT 1"
                )
                rows.append(tuple(r))
                keyword = direct(eng.store).all(
                    "SELECT src, doc_id, term, tf FROM fts_terms ORDER BY 1, 2, 3"
                )
                rows.append(hashlib.sha256(repr([tuple(k) for k in keyword]).encode()).hexdigest())
        assert rows[0] == rows[2] and rows[1] == rows[3]  # the restore's own row, the keyword postings
        assert json.loads(rows[0][3]) == {"added": slow.added, "skipped": slow.skipped}
        third = pg_server.empty()  # server to server: the reading side's cursor on another database
        try:
            migrate(pg_url, third)
            assert _digest(third) == _digest(pg_url)
        finally:
            pg_server.drop(third)
    finally:
        pg_server.drop(other)


def _export_line(where, tmp_path, table_type: str, ident) -> int:
    with _open(where) as eng:
        eng.importers.export_jsonl(tmp_path / "numbering.jsonl")
    for no, line in enumerate((tmp_path / "numbering.jsonl").read_text().splitlines(), 1):
        rec = json.loads(line)
        if rec["type"] == table_type and rec["row"].get("id") == ident:
            return no
    raise AssertionError("not exported")


def test_a_refused_row_is_named_by_its_export_record_and_nothing_is_written(source, pg_url, tmp_path):
    bad = tmp_path / "bad.db"
    shutil.copy(source, bad)
    with sqlite3.connect(bad) as c:
        c.execute("UPDATE memories SET importance = 7 WHERE id = 1200")
    line = _export_line(bad, tmp_path, "memory", 1200)
    with pytest.raises(
        ImportFailed, match=rf"bad\.db's export, record {line}: \"memories\.importance\" must be"
    ):
        migrate(str(bad), pg_url)
    assert migrate(str(source), pg_url).added["memory"] > N  # nothing was written: still empty


def test_a_dangling_reference_is_named_on_either_target(source, pg_url, tmp_path):
    bad = tmp_path / "dangling.db"
    shutil.copy(source, bad)
    with sqlite3.connect(bad) as c:  # foreign keys off, as a hand-edited file may have them
        sid, mid = c.execute(
            "SELECT session_id, max(id) FROM messages WHERE session_id = 'bulk-3'"
        ).fetchone()
        c.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    first = _export_line(bad, tmp_path, "message", mid - 29)
    with pytest.raises(ImportFailed, match=rf"record {first}: this message refers to a missing session"):
        migrate(str(bad), str(tmp_path / "to.db"))
    with pytest.raises(ImportFailed, match=rf"record {first}: cannot restore this message \(.*foreign key"):
        migrate(str(bad), pg_url)


def test_indexes_rebuilt_after_the_rows_are_the_schemas_and_valid(source, pg_trgm_server):  # noqa: F811
    """Secondary indexes are dropped for the bulk rows and built once after (deferred_upkeep):
    every one comes back with its definition, valid, the pg_trgm GIN indexes included."""
    url = pg_trgm_server.fresh()

    def indexes() -> list[tuple[str, str, bool]]:
        with psycopg.connect(url) as c:
            return c.execute(
                "SELECT i.relname, pg_get_indexdef(i.oid), x.indisvalid FROM pg_index x"
                " JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid"
                " WHERE t.relnamespace = 'public'::regnamespace ORDER BY 1"
            ).fetchall()

    with _open(url):
        before = indexes()
    assert {"memories_trgm", "messages_trgm", "memory_vectors_hnsw"} <= {n for n, _, _ in before}
    migrate(str(source), url)
    assert indexes() == before and all(valid for _, _, valid in before)
    assert _digest(url) == _digest(source)
    with _open(url) as eng:
        assert eng.search("ervice 1", mode="keyword").hits  # a substring: the trigram path


def test_meta_the_target_already_holds_is_kept_as_a_restore_keeps_it(tmp_path):
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    for path, value in ((src, "from the source"), (dst, "the target's own")):
        with _open(path) as eng:
            eng.store.write(
                lambda c, v=value: direct(c).execute("INSERT INTO meta(key, value) VALUES ('note', ?)", (v,))
            )
    with _open(src) as eng:
        eng.add_memory("Deploys go through staging first")
    res = migrate(str(src), str(dst))  # meta alone does not make a target hold records: in bulk
    assert res.added["memory"] == 1
    assert res.skipped == {"meta differs from this database's; kept this database's": 1}
    with _open(dst) as eng:
        assert direct(eng.store).one("SELECT value FROM meta WHERE key = 'note'")[0] == "the target's own"
