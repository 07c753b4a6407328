"""A console and the CLI on a streaming replica (issue #24): the header says "read-only replica",
a write key refuses with one notification line, a write verb exits non-zero with one line, and
plain `search` works (it used to die with "internal error: ReadOnlySqlTransaction")."""

from __future__ import annotations

from click.testing import CliRunner

from console.app.widgets.header import StatusHeader
from console.app.widgets.table import DataGrid
from console.cli import cli
from engine import HashEmbedder, open_engine
from tests.screens.helpers import make_app, settle

STANDBY_LINE = "read-only replica: writes go to the primary"


async def test_a_console_on_a_replica_says_so_and_a_write_key_refuses_in_one_line(
    replica_db, pg_replica, clock
):
    primary_url, standby_url = replica_db
    with open_engine(primary_url, embedder=HashEmbedder(), clock=clock, actor="tester") as primary:
        mid = primary.add_memory("never deploy on fridays without a rollback plan", agent="ops")
    pg_replica.wait_for(primary_url)
    standby = open_engine(standby_url, embedder=HashEmbedder(), clock=clock, actor="tester")
    try:
        app = make_app(standby, poll_interval=None)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            assert " REPLICA " in app.query_one(StatusHeader).plain  # " RO REPLICA" when narrow
            await pilot.press("2", "slash", *"deploy fridays", "enter")
            await settle(app, pilot)
            await pilot.press("escape")
            assert app.query_one("#results", DataGrid).selected_key == str(mid)
            await pilot.press("p")  # pin: a write
            await settle(app, pilot)
            assert len(app.errors) == 1
            assert STANDBY_LINE in app.errors[0] and "internal error" not in app.errors[0]
            await pilot.press("a")  # archive asks first: on a replica it is refused at the key
            await settle(app, pilot)
            assert app.screen is app.screen_stack[0]  # no dialog opened
            assert app.errors[1:] == [STANDBY_LINE]
        assert standby.memories.get(mid).pinned is False
    finally:
        standby.close()


def test_the_cli_on_a_replica_searches_and_refuses_writes_in_one_line(replica_db, pg_replica, clock):
    primary_url, standby_url = replica_db
    with open_engine(primary_url, embedder=HashEmbedder(), clock=clock, actor="tester") as primary:
        primary.add_memory("the staging database restarts at noon", agent="ops")
    pg_replica.wait_for(primary_url)
    runner = CliRunner()
    found = runner.invoke(cli, ["--db", standby_url, "search", "staging database", "--json"])
    assert found.exit_code == 0, found.output
    assert "staging database restarts" in found.output
    import contextlib
    import io

    from console.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["--db", standby_url, "add", "a memory written to the replica"])
    assert code != 0
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and STANDBY_LINE in lines[0] and "internal error" not in lines[0]


def test_read_only_flag_makes_the_cli_refuse_writes_on_a_sqlite_file(tmp_path, clock):
    import contextlib
    import io

    from console.cli import main

    db = tmp_path / "m.db"
    with open_engine(db, embedder=HashEmbedder(), clock=clock, actor="tester") as eng:
        eng.add_memory("the office closes at six")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["--db", str(db), "--read-only", "add", "something new"])
    assert code != 0
    assert err.getvalue().strip().endswith("opened read-only: nothing is written")
    with open_engine(db, embedder=HashEmbedder(), clock=clock, actor="tester") as eng:
        assert eng.counts().memories_by_tier["active"] == 1


async def test_the_header_mark_names_what_refuses(tmp_path, clock):
    from console.app.widgets.header import read_only_mark

    db = tmp_path / "m.db"
    with open_engine(db, embedder=HashEmbedder(), clock=clock, actor="tester") as rw:
        assert read_only_mark(rw) == ""
    with open_engine(db, embedder=HashEmbedder(), clock=clock, actor="tester", read_only=True) as ro:
        assert read_only_mark(ro) == "read-only"
        app = make_app(ro, poll_interval=None, start_embedder=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            assert " READ-ONLY " in app.query_one(StatusHeader).plain
