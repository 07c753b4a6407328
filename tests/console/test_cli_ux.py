"""CLI polish (issue 16): ISO-8601 times in --json (epoch beside them), exit 2 for usage and
input errors, a description on every verb's --help, `audit --text`/prefixes, readable counts,
and `boot --agent X` warning about an agent with no memories."""

from __future__ import annotations

import json

import click
import pytest

from console.cli import cli, main
from console.cli.common import counts_text, iso_times


@pytest.fixture
def run(tmp_path, capsys):
    db = str(tmp_path / "a.db")

    def _run(*args):
        code = main(["--db", db, *args])
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, cmd in group.commands.items():
        yield (*path, name), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*path, name))


def test_every_verb_has_a_description_in_its_help(capsys):
    verbs = list(_commands(cli))
    assert len(verbs) > 30
    for path, cmd in verbs:
        assert (cmd.help or cmd.short_help or "").strip(), " ".join(path)
        assert main([*path, "--help"]) == 0
        out = capsys.readouterr().out
        first = (cmd.help or cmd.short_help or "").strip().splitlines()[0]
        assert first[:30] in " ".join(out.split()), " ".join(path)


def test_iso_times_keep_the_epoch_beside_them():
    doc = iso_times({"at": 1767225600.0, "rows": [{"created_at": 0, "deadline": None, "count": 3}]})
    assert doc["at"] == "2026-01-01T00:00:00Z" and doc["at_epoch"] == 1767225600.0
    row = doc["rows"][0]
    assert row["created_at"] == "1970-01-01T00:00:00Z" and row["created_at_epoch"] == 0
    assert row["deadline"] is None and row["deadline_epoch"] is None and row["count"] == 3
    assert iso_times({"at": 1e300})["at"] == 1e300  # beyond any calendar: the number stays


def test_json_times_are_iso_with_the_epoch_kept(run):
    assert run("add", "The user prefers dark mode", "--json")[0] == 0
    code, out, _ = run("audit", "--json")
    rows = json.loads(out)
    assert code == 0 and rows
    assert rows[0]["at"].endswith("Z") and "T" in rows[0]["at"]
    assert isinstance(rows[0]["at_epoch"], float)
    code, out, _ = run("memory", "show", "1", "--json")
    mem = json.loads(out)
    assert code == 0 and mem["created_at"].endswith("Z") and isinstance(mem["created_at_epoch"], float)


@pytest.mark.parametrize(
    "args",
    [
        ("no-such-verb",),
        ("audit", "--no-such-option"),
        ("audit", "--limit", "abc"),
        ("audit", "--since", "not-a-date"),
        ("memory", "show", "abc"),
        ("memory", "show", "424242"),
        ("forget", "--query", "x"),  # --reason missing
        ("rule", "add", "Never do X", "--score", "abc"),
    ],
)
def test_usage_and_input_errors_exit_2_with_one_line(run, args):
    code, out, err = run(*args)
    assert code == 2, (args, out, err)
    assert err.strip() and "Traceback" not in err


def test_audit_text_and_action_prefix(run):
    run("add", "The user prefers dark mode", "--json")
    assert run("memory", "pin", "1", "--reason", "keep for the CANARY rollout", "--json")[0] == 0
    assert run("memory", "archive", "1", "--reason", "old", "--json")[0] == 0
    code, out, _ = run("audit", "--text", "canary", "--json")
    assert code == 0 and [r["action"] for r in json.loads(out)] == ["pin"]
    code, out, _ = run("audit", "--action", "arch*", "--json")
    assert code == 0 and {r["action"] for r in json.loads(out)} == {"archive"}
    code, out, _ = run("audit", "--text", "canary")
    assert code == 0 and "pin" in out and "archive" not in out


def test_counts_text_is_readable():
    text = counts_text({"agents": 5, "sessions": 12, "lifecycle": {"rules": 40, "flows": 3}})
    assert text == "  5 agents · 12 sessions\n  lifecycle: 40 rules · 3 flows"
    assert "{" not in text


def test_boot_warns_about_an_agent_with_no_memories(run):
    run("add", "Deploys need a ticket", "--agent", "atlas", "--json")
    code, out, err = run("boot", "--agent", "atlsa", "--json")
    assert code == 0 and json.loads(out)  # the answer is unchanged, still one JSON document
    assert "warning: agent 'atlsa' has no memories" in err
    code, out, err = run("boot", "--agent", "atlas")
    assert code == 0 and "warning" not in err
