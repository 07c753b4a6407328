"""`memconsole migrate --from --to [--force] [--json]` against the suite's real PostgreSQL: the
verb's answer, its refusals (one line, exit 2, never a traceback), and `--db URL` verbs working on
the migrated server (`forget-request --verify` shows the levels)."""

from __future__ import annotations

import json

import pytest

from console.cli import main

try:  # the suite's PostgreSQL fixtures, wherever this checkout keeps them
    from tests.pg_server import pg_server, pg_url  # noqa: F401
except ImportError:
    from tests.postgres.conftest import pg_server, pg_url  # noqa: F401


@pytest.fixture
def small_db(tmp_path, capsys):
    db = str(tmp_path / "a.db")
    for text in ("Deploys go through staging first", "The vault code is 7781-zephyr-quartz"):
        assert main(["--db", db, "add", text, "--agent", "ops"]) == 0
    capsys.readouterr()
    return db


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_migrate_json_then_the_server_answers_like_the_file(small_db, pg_url, capsys):
    code, out, err = _run(capsys, "--actor", "mover", "migrate", "--from", small_db, "--to", pg_url, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["added"]["memory"] == 2 and doc["target"].startswith("postgresql://")
    code, out, _ = _run(capsys, "--db", pg_url, "search", "vault code", "--mode", "keyword", "--json")
    assert code == 0 and "7781-zephyr-quartz" in out
    code, out, err = _run(
        capsys, "--db", pg_url, "forget", "--query", "7781-zephyr-quartz", "--reason", "asked"
    )
    assert code == 0, err
    rid = int(out.split("forget request ")[1].split(":")[0])
    code, out, err = _run(capsys, "--db", pg_url, "forget-request", str(rid), "--verify")
    assert code == 0, err
    assert "logical: clean" in out and "host files:" in out and "out of reach: not checked" in out


def test_migrate_human_output_and_refusals(small_db, pg_url, tmp_path, capsys):
    code, out, err = _run(capsys, "migrate", "--from", small_db, "--to", pg_url)
    assert code == 0 and "migrated" in out and "2 memory" in out and "vectors: 2" in out, (out, err)
    for args, why in (
        (["--from", small_db, "--to", pg_url], "already holds"),
        (["--from", str(tmp_path / "missing.db"), "--to", pg_url], "does not exist"),
        (["--from", small_db, "--to", small_db], "same database"),
        (["--from", small_db, "--to", "sqlite:///x.db"], "only postgresql:// URLs"),
        (["--from", small_db], "Missing option '--to'"),
    ):
        code, out, err = _run(capsys, "migrate", *args)
        assert code == 2 and why in err and "Traceback" not in err and len(err.strip().splitlines()) <= 3, (
            args,
            err,
        )
    bad = "postgresql://nobody:secret@/nodb?host=/nonexistent"
    code, out, err = _run(capsys, "migrate", "--from", small_db, "--to", bad)
    assert code == 2 and "secret" not in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_export_and_import_jsonl_verbs_on_a_server(small_db, pg_url, pg_server, tmp_path, capsys):
    """`--db URL export jsonl` / `import jsonl`: the same file format on either backend."""
    assert _run(capsys, "migrate", "--from", small_db, "--to", pg_url)[0] == 0
    out_file = tmp_path / "server.jsonl"
    code, out, err = _run(capsys, "--db", pg_url, "export", "jsonl", str(out_file), "--json")
    assert code == 0, err
    assert json.loads(out)["records"]["memory"] == 2 and oct(out_file.stat().st_mode & 0o777) == "0o600"
    other = pg_server.empty() if hasattr(pg_server, "empty") else None
    if other is None:
        pytest.skip("the server fixture cannot make a second database")
    try:
        code, out, err = _run(capsys, "--db", other, "import", "jsonl", str(out_file), "--json")
        assert code == 0, err
        assert json.loads(out)["added"]["memory"] == 2
        code, out, _ = _run(capsys, "--db", other, "search", "zephyr", "--mode", "keyword", "--json")
        assert "7781-zephyr-quartz" in out
    finally:
        pg_server.drop(other)
