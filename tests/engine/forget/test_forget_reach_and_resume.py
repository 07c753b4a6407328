"""Issue 12 (trust), the forget part: a console's forget never drops its SQLite locks; forget
reaches every place text lives; tombstones hold keyed hashes only; an interrupted case resumes
from any process. Links: test_forget_links; malformed rows and the audit head:
test_forget_malformed_and_audit_head."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from engine import HashEmbedder, open_engine
from engine.forget import tombstones
from engine.storage.sqlite.store import connect
from tests.direct_sql import direct
from tests.engine.curator_helpers import add_rule
from tests.engine.forget.forget_places import (
    CANARY,
    SECRET,
    child,
    every_text,
    file_bytes,
    run_child,
)

pytestmark = pytest.mark.backends

# every_text and file_bytes are imported from here by test_forget_verification.
__all__ = ["every_text", "file_bytes"]


# -- 1. the console's forget keeps its locks ------------------------------------------------------------
@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_console_forget_then_another_writer_then_console_keeps_every_write(eng, db_path):
    """The verifier used to read memory.db/-wal/-shm with open()/close() inside the process that
    holds the connection: that drops the process's POSIX locks, the next process deletes the WAL
    under it and the console's later writes vanish into an orphaned WAL."""
    from engine.audit import log as audit

    eng.add_memory("written by the console before the forget", dedup=False)
    eng.add_memory(SECRET, dedup=False)
    assert eng.forget.run("query", CANARY, "leak").status == "verified"
    other = """
        e = open_engine(DB, embedder=HashEmbedder(), actor="cli")
        e.add_memory(sys.argv[1], dedup=False)
        e.close()
    """
    # Lost locks: this process's close checkpoints and deletes the WAL under the console ...
    run_child(other.replace("sys.argv[1]", repr("written by another process after the forget")), db_path)
    # ... the console's next write goes to an orphaned WAL, and it stops seeing other writers
    eng.add_memory("written by the console after the other process", dedup=False)
    run_child(other.replace("sys.argv[1]", repr("written by another process later")), db_path)
    assert (
        direct(eng.store).one("SELECT count(*) FROM memories WHERE content LIKE '%another process%'")[0] == 2
    )
    eng.add_memory("written by the console last", dedup=False)
    eng.close()
    c = connect(db_path)
    try:
        have = {r[0] for r in c.execute("SELECT content FROM memories")}
        assert {
            "written by the console before the forget",
            "written by another process after the forget",
            "written by the console after the other process",
            "written by another process later",
            "written by the console last",
        } <= have
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert audit.verify_chain(c).ok
    finally:
        c.close()


# -- 2. forget reaches every place text lives ----------------------------------------------------------
@pytest.mark.sqlite_only(
    "the SQLite file's bytes and the report folders beside it (a server's live under the state dir)"
)
def test_forget_by_query_reaches_every_place_text_lives(eng, db_path):
    q = "Zq7Kanary"
    c = {
        p: f"{q}-{p}-{i:02d}x"
        for i, p in enumerate(
            (
                "memory",
                "memory_meta",
                "message",
                "tool_call",
                "reasoning",
                "message_meta",
                "tool_name",
                "title",
                "system_prompt",
                "session_meta",
                "rule",
                "rule_meta",
                "rule_history",
                "flow_steps",
                "flow_triggers",
                "flow_description",
                "flow_run_note",
                "proposal",
                "report",
                "audit_reason",
            )
        )
    }
    sid = eng.sessions.add(
        agent="atlas",
        title=f"chat about {c['title']}",
        metadata={"hermes": {"system_prompt": f"You are {c['system_prompt']}", "cwd": c["session_meta"]}},
    )
    eng.sessions.add_message(sid, "user", f"remember {c['message']}")
    eng.sessions.add_message(
        sid,
        "assistant",
        "calling a tool",
        metadata={
            "tool_calls": [{"function": {"name": "save", "arguments": json.dumps({"v": c["tool_call"]})}}],
            "reasoning": f"I should store {c['reasoning']}",
        },
    )
    eng.sessions.add_message(sid, "tool", "ok", tool_name=c["tool_name"])
    eng.sessions.add_message(sid, "assistant", "noted", metadata={"note": c["message_meta"]})
    kept_msg = eng.sessions.add_message(sid, "user", "an unrelated question about the weather")
    eng.add_memory(f"fact: {c['memory']}", dedup=False, reason=f"why {c['audit_reason']}")
    eng.add_memory("a memory whose metadata quotes it", metadata={"src": c["memory_meta"]}, dedup=False)
    eng.rules.add(f"Never mention {c['rule']}")
    eng.rules.add("A rule with a quoting note", metadata={"why": c["rule_meta"]})
    kept_rule = eng.rules.add("Always greet the operator politely").id
    eng.rules.reinforce(kept_rule, reason=f"because of {c['rule_history']}")
    eng.flows.add("deploy", [f"run {c['flow_steps']}"])
    eng.flows.add("rollback", ["revert"], triggers=[c["flow_triggers"]])
    eng.flows.add("backup", ["copy"], description=f"nightly {c['flow_description']}")
    eng.flows.add("lint", ["ruff"])
    eng.flows.record_run("lint", "pass", note=f"fine {c['flow_run_note']}")
    a = eng.add_memory(f"The vault code is {c['proposal']} for the west door", dedup=False)
    eng.add_memory(f"The vault code is {c['proposal']} for the west door!", dedup=False)
    eng.add_memory(f"The vault code {c['report']} stays in the report", dedup=False)
    run = eng.curator.run()
    assert run.proposals and a in run.proposals[0].members
    before = every_text(db_path) + file_bytes(db_path).decode("utf-8", "replace")
    missing = [p for p, v in c.items() if v not in before]
    assert missing == [], f"canaries not planted: {missing}"

    res = eng.forget.run("query", q, "every place")
    assert res.status == "verified" and res.residue == 0, (res.verification.files, res.counts)
    after = every_text(db_path)
    raw = file_bytes(db_path)
    assert [p for p, v in c.items() if v in after] == []
    assert q.encode() not in raw and q.lower().encode() not in raw.lower()
    assert eng.sessions.get(sid).session.title == ""
    assert [m.id for m in eng.sessions.get(sid).messages] == [kept_msg]
    assert eng.rules.get(kept_rule)
    assert {f.name for f in eng.flows.list()} == {"lint"}
    assert eng.audit.verify().ok


# -- 3. tombstones: keyed hashes, never the text ---------------------------------------------------------
@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_tombstones_hold_keyed_hashes_of_identity_and_content_only(eng, db_path):
    sid = eng.sessions.add("hermes-sess-42", agent="scout", title="private chat")
    eng.sessions.add_message(sid, "user", f"my code is {CANARY}")
    eng.add_memory(SECRET, agent="scout", dedup=False)
    add_rule(eng, f"Never reveal {CANARY}", agent="scout")
    eng.flows.add("unlock-door", [f"type {CANARY}"], agent="scout", description="opens it")
    res = eng.forget.run("agent", "scout", "agent decommissioned")
    assert res.status == "verified"
    rows = direct(eng.store).all("SELECT * FROM tombstones WHERE request_id = ?", (res.request_id,))
    assert {r["target_kind"] for r in rows} == {"session", "message", "memory", "rule", "flow"}
    blob = json.dumps([list(r) for r in rows])
    assert CANARY not in blob and "unlock-door" not in blob and "locker" not in blob
    with eng.store.reading() as conn:
        assert tombstones.is_forgotten(conn, kind="session", ident="hermes-sess-42")
        assert tombstones.is_forgotten(
            conn, kind="memory", text="  the LOCKER combination " + CANARY.lower() + "\n opens the east door"
        )
        # a message that went with its session is known by the session id, not by its content
        assert not tombstones.is_forgotten(conn, kind="message", text=f"my code is {CANARY}")
        assert tombstones.is_forgotten(conn, kind="rule", text=f"Never reveal {CANARY}")
        assert tombstones.is_forgotten(conn, kind="flow", ident="unlock-door")
        flow = tombstones.flow_text("opens it", [f"type {CANARY}"])
        assert tombstones.is_forgotten(conn, kind="flow", text=flow)
        assert not tombstones.is_forgotten(conn, kind="session", ident="hermes-sess-43")
        assert not tombstones.is_forgotten(conn, kind="memory", text="something else entirely")
        assert not tombstones.is_forgotten(conn, kind="memory", text="")
    kept = eng.sessions.add(agent="atlas")
    eng.sessions.add_message(kept, "user", "the wifi key is Wombat-77-Sierra")
    eng.forget.run("query", "Wombat-77-Sierra", "a single message")
    with eng.store.reading() as conn:
        assert tombstones.is_forgotten(conn, kind="message", text="The wifi key is  Wombat-77-Sierra")


# -- 4. interrupted cases resume from another process ---------------------------------------------------
@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
@pytest.mark.parametrize("stage", ["before-commit", "after-commit"])
def test_a_forget_killed_mid_execute_is_finished_by_another_process(tmp_path, db_path, stage):
    e = open_engine(db_path, embedder=HashEmbedder())
    e.add_memory(SECRET, dedup=False)
    e.add_memory("an innocent memory about tea", dedup=False)
    rid = e.forget.run("query", CANARY, "ticket 9", preview=True).request.id
    e.close()
    marker = tmp_path / "paused"
    p = child(
        f"""
        e = open_engine(DB, embedder=HashEmbedder())
        e.forget.execute({rid})
    """,
        db_path,
        env={"MEMCONSOLE_FORGET_TEST_PAUSE": f"{stage}:{marker}"},
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert p.poll() is None, p.stderr.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    e = open_engine(db_path, embedder=HashEmbedder())
    try:
        assert e.forget.get(rid).status == ("previewed" if stage == "before-commit" else "executed")
        res = e.forget.execute(rid)  # what `memconsole forget-request ID --execute` runs
        assert res.status == "verified" and res.residue == 0
        assert direct(e.store).one("SELECT count(*) FROM memories")[0] == 1
        assert not any((db_path.parent / "forget").glob("*.sealed"))  # proven gone: seal removed
    finally:
        e.close()
    assert CANARY.encode() not in file_bytes(db_path)


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_a_case_left_executed_by_a_long_reader_is_verified_later_from_a_fresh_process(eng, db_path):
    eng.add_memory(SECRET, dedup=False)
    reader = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys
            import sqlean as sqlite3
            c = sqlite3.connect({str(db_path)!r}, isolation_level=None)
            c.execute("BEGIN"); c.execute("SELECT count(*) FROM memories").fetchone()
            print("ready", flush=True); sys.stdin.readline(); c.execute("COMMIT"); c.close()
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout.readline().strip() == "ready"
    res = eng.forget.run("query", CANARY, "long reader")
    assert res.status == "executed" and not res.verification.wal_truncated
    reader.stdin.write("\n")
    reader.stdin.flush()
    reader.wait(timeout=30)
    out = run_child(
        f"""
        e = open_engine(DB, embedder=HashEmbedder())
        v = e.forget.verify({res.request_id})
        print(json.dumps([e.forget.get({res.request_id}).status, v.residue, v.checked_texts]))
        e.close()
    """,
        db_path,
    )
    status, residue, checked = json.loads(out.strip().splitlines()[-1])
    assert (status, residue) == ("verified", 0) and checked > 0
    assert eng.forget.get(res.request_id).status == "verified"


def test_cli_verify_rescans_a_case(tmp_path, capsys):
    from console.cli import main

    db = str(tmp_path / "memory.db")
    e = open_engine(db, embedder=HashEmbedder())
    e.add_memory(SECRET, dedup=False)
    rid = e.forget.run("query", CANARY, "cli", preview=True).request.id
    e.close()
    assert main(["--db", db, "forget-request", str(rid), "--execute", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "verified"
    assert main(["--db", db, "forget-request", str(rid), "--verify"]) == 0
    assert "re-checked by keyed fingerprints over every live row: recurrence 0" in capsys.readouterr().out
