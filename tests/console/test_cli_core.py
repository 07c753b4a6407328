"""The foundation CLI, called in-process as `memconsole` would be (same entry point)."""

import json

import pytest

from console.cli import main

HOSTILE = [
    '"unbalanced',
    "AND",
    "NOT",
    "(x",
    "v1.2 @nasa who's",
    "ask-codex",
    "*",
    "x" * 100_000,
    "a\x00b".replace("\x00", "\\x00"),
    "大别山",
    "山",
]


@pytest.fixture
def run(tmp_path, capsys):
    db = str(tmp_path / "a.db")

    def _run(*args):
        code = main(["--db", db, *args])
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def test_acceptance_add_then_paraphrase_search(run, minilm):
    code, out, _ = run("add", "The user prefers dark mode in every editor", "--json")
    assert code == 0 and json.loads(out) == {"id": 1, "deduplicated": False}
    code, out, _ = run("search", "which colour theme does the user like", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["mode"] == "hybrid" and doc["hits"][0]["id"] == 1
    b = doc["hits"][0]["breakdown"]
    assert b["bm25_rank"] is not None and b["vector_rank"] is not None
    assert set(doc) >= {"query", "mode", "hits", "elsewhere"}
    assert set(doc["hits"][0]) >= {
        "id",
        "content",
        "kind",
        "category",
        "tier",
        "metadata",
        "score",
        "breakdown",
    }


@pytest.mark.parametrize("q", HOSTILE + ["a\x00b"])
def test_hostile_queries_exit_zero_with_json(run, q, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    run("add", "something to find", "--json")
    code, out, err = run("search", q, "--json")
    assert code == 0, err
    assert json.loads(out)["mode"] == "hybrid"


def test_user_errors_are_one_line_without_traceback(run, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    for args in (
        ["add", ""],
        ["add", "x", "--importance", "7"],
        ["session", "nope"],
        ["memory", "show", "99"],
        ["search", "x", "--tier", "hot"],
        ["ingest", "/no/such.jsonl"],
    ):
        code, out, err = run(*args)
        assert code != 0, args
        assert err.count("\n") == 1 and "Traceback" not in err, (args, err)


def test_ingest_jsonl_then_sessions_session_messages(run, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    f = tmp_path / "in.jsonl"
    f.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "type": "session",
                    "id": "s1",
                    "agent": "atlas",
                    "title": "Setup",
                    "started_at": "2026-01-02T10:00:00Z",
                },
                {
                    "type": "message",
                    "session_id": "s1",
                    "role": "user",
                    "content": "use the blue theme",
                    "at": 1767348000,
                },
                {
                    "type": "memory",
                    "content": "User wants the blue theme",
                    "category": "preference",
                    "agent": "atlas",
                    "session_id": "s1",
                },
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    code, out, err = run("ingest", str(f), "--json")
    assert code == 0, err
    assert json.loads(out)["added"] == {"sessions": 1, "messages": 1, "memories": 1}
    assert json.loads(run("sessions", "--json")[1])[0]["id"] == "s1"
    assert json.loads(run("session", "s1", "--json")[1])["messages"][0]["content"] == "use the blue theme"
    assert json.loads(run("messages", "blue", "--json")[1])[0]["message"]["session_id"] == "s1"
    # idempotent for sessions; a bad line names file and line and writes nothing
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "memory", "content": "ok"}\n{not json}\n', encoding="utf-8")
    code, _, err = run("ingest", str(bad))
    assert code != 0 and "bad.jsonl:2" in err
    assert len(json.loads(run("search", "ok", "--json", "--mode", "keyword")[1])["hits"]) == 0


def test_explain_and_memory_verbs(run, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    run("add", "the release train leaves on thursdays")
    code, out, _ = run("explain", "release train", "1", "--json")
    assert code == 0 and json.loads(out)["bm25_rank"] == 1
    assert json.loads(run("memory", "pin", "1", "--json")[1])["pinned"] is True
    assert json.loads(run("memory", "importance", "1", "0.9", "--json")[1])["importance"] == 0.9
    assert json.loads(run("memory", "archive", "1", "--json")[1])["tier"] == "archived"
