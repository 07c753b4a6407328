"""Issue 22 (Trust), faults: a disk that fills during forget, import, migrate or a curator run is
said as "disk full" in one line (DiskFull; the CLI exits 5), never "SQL logic error" or "internal
error", and nothing is half-written. SQLite's page cap (`max_page_count`) is a real SQLITE_FULL
from the library; a server's full disk is psycopg's DiskFull, raised inside a real write."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
import sqlean

from engine import DiskFull, HashEmbedder, open_engine
from engine.importers.migrate import migrate
from tests.direct_sql import direct

pytestmark = pytest.mark.backends


@contextmanager
def full_disk(monkeypatch, *engines: Any, spare: int = 0) -> Iterator[None]:
    """Every SQLite connection (the engines' own and any opened meanwhile) may grow its file by
    `spare` pages at most: past that SQLite answers SQLITE_FULL, as on a full disk."""
    real = sqlean.connect

    def cap(c: Any) -> None:  # 0 would mean "no cap": a new, empty file gets one page
        c.execute(f"PRAGMA max_page_count = {max(1, c.execute('PRAGMA page_count').fetchone()[0] + spare)}")

    def capped(*a: Any, **k: Any) -> Any:
        c = real(*a, **k)
        with _quiet():
            cap(c)
        return c

    monkeypatch.setattr(sqlean, "connect", capped)
    for e in engines:
        cap(direct(e.store))
    try:
        yield
    finally:
        monkeypatch.setattr(sqlean, "connect", real)
        for e in engines:
            direct(e.store).execute("PRAGMA max_page_count = 4294967294")


def _quiet() -> suppress[sqlean.Error]:
    return suppress(sqlean.Error)  # a connection that cannot read its size (not a database): no cap


def _assert_disk_full(exc: BaseException) -> None:
    msg = str(exc)
    assert isinstance(exc, DiskFull), (type(exc), msg)
    assert "disk full" in msg and "\n" not in msg and "SQL logic" not in msg and "internal" not in msg


def _snapshot(eng) -> dict[str, int]:
    return {t: direct(eng.store).one(f"SELECT count(*) FROM {t}")[0] for t in _TABLES}


_TABLES = (
    "memories",
    "messages",
    "sessions",
    "audit",
    "proposals",
    "forget_requests",
    "tombstones",
    "curator_runs",
)


def _fill(eng, n: int = 120, session: str = "s1") -> list[int]:
    sid = eng.sessions.add(session, agent="ops")
    eng.sessions.add_messages(sid, [{"content": f"message {i} about the deploy"} for i in range(20)])
    return [
        r.id
        for r in eng.memories.add_many_ex(
            [
                {"content": f"the deploy of service {i % 7} runs on friday " * 3, "agent": "ops"}
                for i in range(n)
            ],
            dedup=False,
        )
    ]


@pytest.mark.sqlite_only("the page cap is SQLite's; a server's full disk is the test below")
def test_a_forget_on_a_full_disk_says_so_and_forgets_nothing(eng, monkeypatch):
    ids = _fill(eng)
    before = _snapshot(eng)
    with full_disk(monkeypatch, eng), pytest.raises(Exception) as e:
        eng.forget.run("memory", ids[:40], "user asked")
    _assert_disk_full(e.value)
    after = _snapshot(eng)
    # Nothing erased, no tombstone: only the case opened and previewed before the disk filled,
    # which the next run picks up (one case), as after any interruption.
    assert {t: after[t] for t in ("memories", "messages", "tombstones")} == {
        t: before[t] for t in ("memories", "messages", "tombstones")
    }
    assert after["forget_requests"] == 1
    assert direct(eng.store).one("SELECT status FROM forget_requests")[0] in ("open", "previewed")
    eng.forget.run("memory", ids[:40], "user asked")  # room again: it goes through
    assert _snapshot(eng)["memories"] == before["memories"] - 40 and _snapshot(eng)["forget_requests"] == 1


def _jsonl(path: Path, n: int = 300) -> Path:
    lines = [{"type": "session", "id": "s-imp", "agent": "ops"}]
    lines += [{"type": "message", "session_id": "s-imp", "content": f"line {i} " * 40} for i in range(n)]
    lines += [{"type": "memory", "content": f"imported fact {i} " * 40} for i in range(n)]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


@pytest.mark.sqlite_only("the page cap is SQLite's")
def test_an_ingest_and_a_jsonl_restore_on_a_full_disk_say_so_and_write_nothing(eng, monkeypatch, tmp_path):
    _fill(eng, 20)
    src = _jsonl(tmp_path / "in.jsonl")
    before = _snapshot(eng)
    with full_disk(monkeypatch, eng), pytest.raises(Exception) as e:
        eng.importers.ingest(src, dedup=False)
    _assert_disk_full(e.value)
    assert _snapshot(eng) == before
    other = tmp_path / "other.db"
    with open_engine(other, embedder=HashEmbedder()) as o:
        _fill(o, 200, session="s-other")
        o.importers.export_jsonl(tmp_path / "export.jsonl")
    with open_engine(tmp_path / "fresh.db", embedder=HashEmbedder()) as fresh:
        empty = _snapshot(fresh)
        with full_disk(monkeypatch, fresh, spare=30), pytest.raises(Exception) as e:
            fresh.importers.jsonl(tmp_path / "export.jsonl")
        _assert_disk_full(e.value)
        assert _snapshot(fresh) == empty


@pytest.mark.sqlite_only("the page cap is SQLite's; the target here is a SQLite file")
@pytest.mark.parametrize("spare", [0, 40])
def test_a_migrate_onto_a_full_disk_says_so_and_leaves_no_half_copy(db_path, monkeypatch, tmp_path, spare):
    with open_engine(db_path, embedder=HashEmbedder()) as src:
        _fill(src, 400)
    target = tmp_path / "target.db"
    with full_disk(monkeypatch, spare=spare), pytest.raises(Exception) as e:
        migrate(str(db_path), str(target))
    _assert_disk_full(e.value)
    if target.exists():  # what is left holds nothing of the source
        with open_engine(target, embedder=None) as t:
            assert _snapshot(t)["memories"] == 0 and _snapshot(t)["messages"] == 0


@pytest.mark.sqlite_only("the page cap is SQLite's")
def test_a_curator_run_on_a_full_disk_says_so_and_proposes_nothing(eng, monkeypatch):
    _fill(eng, 200)
    before = _snapshot(eng)
    with full_disk(monkeypatch, eng), pytest.raises(Exception) as e:
        eng.curator.run()
    _assert_disk_full(e.value)
    assert _snapshot(eng) == before


def test_a_servers_full_disk_is_said_as_disk_full(eng, backend):
    """On PostgreSQL the server's DiskFull (SQLSTATE 53100) inside a write; on SQLite SQLITE_FULL."""
    n = _snapshot(eng)["memories"]

    def write(conn: Any) -> None:
        direct(conn).execute("INSERT INTO sessions(id, agent) VALUES ('s-x', 'a')")
        if backend == "postgres":
            import psycopg

            raise psycopg.errors.DiskFull("could not extend file: No space left on device")
        raise sqlean.OperationalError("database or disk is full")

    with pytest.raises(Exception) as e:
        eng.store.write(write)
    _assert_disk_full(e.value)
    assert _snapshot(eng)["memories"] == n and _snapshot(eng)["sessions"] == 0


@pytest.mark.sqlite_only("the report files beside a SQLite file; the same code writes a server's")
def test_a_report_file_that_hits_a_full_disk_is_said_and_not_left_half_written(eng, monkeypatch):
    """The curator's report is written after its run committed: a full disk there is DiskFull
    naming the file, and no partial file stays (the run's proposals are queued)."""
    import errno
    import os

    _fill(eng, 60)
    real = os.write

    def write(fd: int, data: Any) -> int:
        if len(data) > 100:  # the report's body: half of it lands, then the disk is full
            real(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(Exception) as e:
        eng.curator.run()
    monkeypatch.setattr(os, "write", real)
    _assert_disk_full(e.value)
    folder = Path(direct(eng.store).one("SELECT report_dir FROM curator_runs ORDER BY id DESC")[0])
    assert not [p.name for p in folder.iterdir() if p.stat().st_size]  # nothing half-written
