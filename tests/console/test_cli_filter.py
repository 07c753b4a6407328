"""`--filter` on the listing verbs (issue #27): the console's filter language in scripts, one
clear line (exit 2) for a bad token, and a key given two ways must agree."""

from __future__ import annotations

import json

import pytest

from console.cli import main
from tests.screens.seed import seeded_engine


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    db = tmp_path / "a.db"
    eng, ids = seeded_engine(db)
    eng.close()

    def _run(*args):
        code = main(["--db", str(db), *args])
        out, err = capsys.readouterr()
        return code, out, err

    _run.ids = ids  # type: ignore[attr-defined]
    return _run


def test_listing_verbs_take_the_filter_language(run):
    code, out, _ = run("sessions", "--filter", "agent:atlas part two", "--json")
    assert code == 0 and [s["id"] for s in json.loads(out)] == ["s-deploy-2"]
    code, out, _ = run("sessions", "--filter", "source:web since:2025-12-30 until:2026-01", "--json")
    assert code == 0 and [s["id"] for s in json.loads(out)] == ["s-trip"]
    code, out, _ = run("search", "deploy", "--filter", "agent:hermes tier:all", "--no-access", "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and hits and {h["agent"] for h in hits} == {"hermes"}
    code, out, _ = run("proposals", "--filter", "vpn", "--json")
    assert code == 0 and [p["id"] for p in json.loads(out)] == [run.ids["proposals"]["archive"]]
    code, out, _ = run("proposals", "--filter", "kind:merge agent:atlas", "--json")
    assert code == 0 and [p["id"] for p in json.loads(out)] == [run.ids["proposals"]["merge"]]
    code, out, _ = run("audit", "--filter", "action:proposal* since:2025", "--json")
    rows = json.loads(out)
    assert code == 0 and rows and all(r["action"].startswith("proposal") for r in rows)
    code, out, _ = run("rules", "--filter", "status:active,dormant,critical,retired", "--json")
    assert code == 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("sessions", "--filter", "acter:dana"), "unknown key 'acter' for the sessions list"),
        (("audit", "--filter", "since:yesterday"), "since:yesterday is not a time"),
        (("search", "x", "--filter", "tier:frozen"), "tier:frozen is not one of"),
        (("search", "x", "--filter", "since:2026"), "since: does not apply to search"),
        (("proposals", "--filter", 'x "open'), "a quote is not closed"),
        (("sessions", "--filter", "a\x1b[2Jb"), "control character U+001B"),
        (("sessions", "--filter", "y" * 50_000), "at most 2,000 characters, this one has 50,000"),
        (
            ("sessions", "--agent", "scout", "--filter", "agent:atlas"),
            "--agent says 'scout' but --filter says",
        ),
    ],
)
def test_a_bad_filter_is_one_line_and_exit_2(run, args, says):
    code, out, err = run(*args, "--json")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "\x1b" not in err and "Traceback" not in err
