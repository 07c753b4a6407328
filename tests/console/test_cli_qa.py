"""Regressions from the QA sweep: operator mistakes with --db and read-only files are one clear
line on stderr and a non-zero exit, never "internal error"."""

import pytest

from console.cli import main
from engine import HashEmbedder, open_engine
from engine.errors import EngineError


@pytest.fixture
def cli(capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")

    def _run(*args):
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def _one_line(err: str) -> bool:
    return err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err


def test_empty_db_path_is_the_current_directory_and_refused(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("--db", "", "rules", "--json")
    assert code == 2 and out == "" and _one_line(err), err
    assert "directory" in err


def _read_only(eng) -> None:
    # SQLite answers query_only with the same SQLITE_READONLY a 0444 file or ro mount gives
    # (tests run as root, where chmod alone would not stop a write).
    eng.store.conn.execute("PRAGMA query_only = ON")


def test_write_to_read_only_database_is_an_engine_error(tmp_path):
    eng = open_engine(tmp_path / "ro.db", embedder=HashEmbedder(), actor="qa")
    try:
        eng.add_memory("written before the file went read-only")
        _read_only(eng)
        with pytest.raises(EngineError, match="read-only"):
            eng.add_memory("this cannot be written")
        assert [m.content for m in eng.search("written", mode="keyword", record_access=False).hits] == [
            "written before the file went read-only"
        ]
    finally:
        eng.close()


def test_doctor_on_read_only_database_reports_no_false_fts_failure(tmp_path):
    eng = open_engine(tmp_path / "ro.db", embedder=HashEmbedder(), actor="qa")
    try:
        eng.add_memory("something indexed")
        _read_only(eng)
        report = eng.health.doctor()
        fts = [c for c in report.checks if c.name.startswith("fts-integrity:")]
        assert fts and all(c.ok for c in fts), [(c.name, c.detail) for c in fts]
        assert all("read-only" in c.detail for c in fts)
    finally:
        eng.close()


def test_console_honours_memconsole_embedder_none(tmp_path, monkeypatch):
    """MEMCONSOLE_EMBEDDER=none means keyword-only for the console too, as for every verb."""
    from console.app import MemConsole

    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    app = MemConsole(db_path=str(tmp_path / "c.db"), start_embedder=False, poll_interval=None)
    try:
        assert app.engine.embedder.state == "none"
    finally:
        app.engine.close()


@pytest.mark.parametrize("days", ["0", "-1", "nan", "4000"])
def test_decay_days_out_of_range_message_is_not_self_contradictory(cli, tmp_path, days):
    code, out, err = cli("--db", str(tmp_path / "d.db"), "decay", "forecast", "--days", days, "--json")
    assert code == 2 and out == "" and _one_line(err), err
    if days == "0":
        assert "more than 0" in err  # it said "between 0 and 3650, not 0"


def test_quitting_while_the_model_loads_says_why_it_waits(tmp_path, monkeypatch, capsys):
    """After `q` the console closes the engine, which lets a half-loaded model finish (seconds):
    the terminal says so instead of staying blank, and the engine is closed exactly once."""
    from console import app as app_mod

    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    closed = []

    def fake_run(self):
        self.engine.embedder.state = "loading"  # as if `q` came mid-load
        real_close = self.engine.close
        self.engine.close = lambda: (closed.append(1), real_close())
        self.on_unmount()  # what Textual calls on the way out

    monkeypatch.setattr(app_mod.MemConsole, "run", fake_run)
    app_mod.run_console(tmp_path / "q.db")
    assert closed == [1]
    assert "finish loading" in capsys.readouterr().err
