"""Moving a whole database between backends on the suite's real PostgreSQL: SQLite (the demo: four
agents, sessions, transcripts, rules, flows, curator proposals, a forget case and its tombstones)
-> PostgreSQL -> JSONL equals the SQLite export except the restore's own audit row; and back."""

from __future__ import annotations

import json

import pytest

from engine import FixedClock, HashEmbedder, open_engine
from engine.demo.build import write_demo
from engine.errors import ImportFailed, InvalidInput
from engine.importers.migrate import migrate
from tests.direct_sql import direct

T0 = "2026-01-01T00:00:00Z"


def _open(where):
    return open_engine(where, embedder=HashEmbedder(), clock=FixedClock(T0), actor="tester", load="now")


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("migrate") / "demo.db"
    with _open(path) as eng:
        write_demo(eng)
    return path


def _export(where) -> tuple[dict, dict[str, list[str]]]:
    """(header, {record type: its records as sorted JSON lines})."""
    with _open(where) as eng:
        recs = list(eng.importers.export_records())
    by: dict[str, list[str]] = {}
    for r in recs[1:]:
        by.setdefault(r["type"], []).append(json.dumps(r, sort_keys=True))
    return recs[0], {k: sorted(v) for k, v in by.items()}


def _without_restore_row(audit: list[str]) -> tuple[list[str], dict]:
    rows = [json.loads(x) for x in audit]
    last = max(rows, key=lambda r: r["row"]["id"])
    return sorted(json.dumps(r, sort_keys=True) for r in rows if r is not last), last["row"]


def test_sqlite_to_postgres_to_jsonl_equals_the_sqlite_export(demo_db, pg_url):
    head_a, a = _export(demo_db)
    res = migrate(str(demo_db), pg_url, actor="mover")
    assert res.added["memory"] == head_a["records"]["memory"] > 100 and res.vectors > 100
    assert res.skipped == {}
    head_b, b = _export(pg_url)
    assert set(a) == set(b) and {"memory", "tombstone", "forget_request", "proposal", "flow"} <= set(a)
    b_audit, restore = _without_restore_row(b["audit"])
    assert restore["action"] == "import" and restore["actor"] == "mover"
    for kind in a:
        assert (b_audit if kind == "audit" else b[kind]) == a[kind], kind
    assert head_b["records"] == {**head_a["records"], "audit": head_a["records"]["audit"] + 1}
    with _open(pg_url) as eng:
        assert eng.audit.verify().ok  # the chain came over intact, the restore's row linked to it
        assert eng.search("deploy", mode="keyword").hits  # indexes built on the way in
        logged = direct(eng.store).one("SELECT count(DISTINCT memory_id) FROM vector_changes")[0]
        assert logged == res.vectors  # other processes' in-memory matrices learn of every vector
        new = eng.add_memory("written after the migration")  # ids continue past the restored ones
        assert new > max(json.loads(x)["row"]["id"] for x in a["memory"])


def test_postgres_back_to_sqlite_round_trips(demo_db, pg_url, tmp_path):
    migrate(str(demo_db), pg_url)
    back = tmp_path / "back.db"
    migrate(pg_url, str(back))
    _, a = _export(demo_db)
    _, c = _export(back)
    audit = [json.loads(x) for x in c["audit"]]
    restores = [r for r in audit if r["row"]["action"] == "import"]
    assert len(restores) == 2  # one per restore, nothing else added
    kept = sorted(json.dumps(r, sort_keys=True) for r in audit if r not in restores)
    assert kept == a["audit"] and all(c[k] == a[k] for k in a if k != "audit")


def test_a_non_empty_target_is_refused_unless_forced(pg_url, tmp_path):
    small, other = tmp_path / "small.db", tmp_path / "other.db"
    with _open(small) as eng:
        eng.add_memory("Deploys go through the staging cluster first")
    with _open(other) as eng:
        eng.add_memory("Another fleet's memory under the same id")
    migrate(str(small), pg_url)
    with pytest.raises(InvalidInput, match="already holds 3 records"):  # memory, its audit row, the restore's
        migrate(str(small), pg_url)
    again = migrate(str(small), pg_url, force=True)  # told to: every row is already there, none doubles
    assert again.added == {} and again.skipped == {
        f"{k} already present": 1 for k in ("meta", "memory", "audit")
    }
    with pytest.raises(ImportFailed, match=r"other\.db's export, record 3: memory 1 already exists"):
        migrate(str(other), pg_url, force=True)  # ids collide with different content: refused whole
    with _open(pg_url) as eng:
        assert [m.content for m in eng.memories.list()] == ["Deploys go through the staging cluster first"]


@pytest.mark.parametrize(
    "source,target,why",
    [
        ("/nonexistent/memory.db", "{pg}", "does not exist"),
        ("{demo}", "{demo}", "same database"),
        ("{demo}", "/nonexistent/dir/x.db", "folder .* does not exist"),
        ("{demo}", "mysql://u@h/db", "only postgresql:// URLs"),
        ("{demo}", "postgresql://u@h/db\x1b[31m", "control characters"),
        ("", "{pg}", "needs a source"),
        ("{tmp}", "{pg}", "not a regular file"),
    ],
)
def test_hostile_places_get_one_clear_line(demo_db, pg_url, tmp_path, source, target, why):
    fill = {"{pg}": pg_url, "{demo}": str(demo_db), "{tmp}": str(tmp_path)}
    with pytest.raises(InvalidInput, match=why):
        migrate(fill.get(source, source), fill.get(target, target))


def test_an_export_from_before_a_forget_brings_nothing_back_on_a_server(pg_url, tmp_path):
    with _open(pg_url) as eng:
        keep = eng.add_memory("Deploys go through the staging cluster first")
        gone = eng.add_memory("The vault code is 7781-zephyr-quartz", agent="ops")
        eng.importers.export_jsonl(tmp_path / "before.jsonl")
        eng.forget.run("memory", [gone], "user asked")
        res = eng.importers.jsonl(tmp_path / "before.jsonl")
        assert "memory" not in res.added and res.skipped
        assert [m.id for m in eng.memories.list()] == [keep]
        assert eng.search("vault zephyr", mode="keyword").hits == []
