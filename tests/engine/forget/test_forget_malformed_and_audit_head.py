"""Issue 12 (trust), forget: malformed rows never stop a forget, and each case records the audit
head (a cut audit tail shows from the cases). Split from test_forget_reach_and_resume."""

from __future__ import annotations

import json

import pytest

from tests.direct_sql import direct
from tests.engine.forget.forget_places import (
    CANARY,
    SECRET,
)

pytestmark = pytest.mark.backends


# -- 6. malformed rows never stop a forget --------------------------------------------------------------
@pytest.mark.sqlite_only("plants a blob in a text column (SQLite's dynamic typing); PostgreSQL refuses it")
def test_malformed_rows_never_make_forget_fail(eng, db_path):
    m = eng.add_memory(SECRET, agent="scout", dedup=False)
    sid = eng.sessions.add(agent="scout", title=f"about {CANARY}")
    eng.sessions.add_message(sid, "user", f"hi {CANARY}")

    def poison(conn):
        c = direct(conn)
        c.execute(
            "UPDATE memories SET metadata = '{not json', importance = ? WHERE id = ?", (float("inf"), m)
        )
        c.execute("UPDATE sessions SET metadata = '[1, 2' WHERE id = ?", (sid,))
        c.execute("UPDATE messages SET metadata = 'null' WHERE session_id = ?", (sid,))
        c.execute(
            "INSERT INTO rules(text, agent, metadata, score) VALUES (?, 'scout', '{\"promoted_from\": ', ?)",
            (f"rule {CANARY}", float("-inf")),
        )
        c.execute("INSERT INTO rules(text, metadata) VALUES ('other rule', 'garbage')")
        c.execute(
            "INSERT INTO proposals(kind, target_kind, members, evidence, fingerprint, created_at)"
            " VALUES ('merge', 'memory', 'not a list', '{bad', 'fp', 0)"
        )
        c.execute(
            "INSERT INTO proposals(kind, target_kind, members, evidence, fingerprint, created_at)"
            " VALUES ('merge', 'memory', '{\"a\": 1}', 'null', 'fp2', 0)"
        )
        c.execute("INSERT INTO flows(name, steps, triggers, metadata) VALUES ('f', '[oops', 'x', '{')")
        c.execute("INSERT INTO audit(at, actor, action, summary) VALUES (0, 'x', 'y', ?)", ("{" + CANARY,))
        # invalid UTF-8 (another tool wrote bytes as TEXT): the driver cannot even decode it
        c.execute(
            "INSERT INTO memories(content, agent) VALUES (CAST(X'6d7920ff20636f6465' AS TEXT), 'scout')"
        )
        c.execute(
            "INSERT INTO sessions(id, metadata) VALUES ('bytes', CAST(? || X'ff' AS TEXT))",
            (json.dumps({"note": CANARY}),),
        )

    eng.store.write(poison)
    res = eng.forget.run("agent", "scout", "malformed")
    assert res.status in ("verified", "executed") and res.counts["memories"] == 2
    res = eng.forget.run("query", CANARY, "malformed too")
    assert res.residue == 0


# -- 7. each case records the audit head ---------------------------------------------------------------
def test_each_executed_case_records_the_audit_head(eng):
    from engine.audit import log as audit

    eng.add_memory(SECRET, dedup=False)
    res = eng.forget.run("query", CANARY, "head")
    head = eng.forget.get(res.request_id).counts["audit_head"]
    row = direct(eng.store).one("SELECT id, hash, action FROM audit WHERE id = ?", (head[0],))
    assert row["action"] == "forget" and row["hash"] == head[1]
    # a later forget that redacts earlier rows re-chains them: the earlier case follows
    eng.add_memory("Another secret: Wombat-99x-Sierra lives here", dedup=False)
    eng.forget.run("query", "Wombat-99x-Sierra", "second")
    head2 = eng.forget.get(res.request_id).counts["audit_head"]
    with eng.store.reading() as c:
        assert direct(c).execute("SELECT hash FROM audit WHERE id = ?", (head2[0],)).fetchone()[0] == head2[1]
        assert audit.head(c)[0] > head2[0]


def test_a_cut_audit_tail_shows_from_the_forget_cases(eng):
    from engine.forget.heads import check_case_heads

    eng.add_memory(SECRET, dedup=False)
    res = eng.forget.run("query", CANARY, "head")
    with eng.store.reading() as c:
        assert check_case_heads(c) == []
    head = eng.forget.get(res.request_id).counts["audit_head"]
    eng.store.write(lambda c: direct(c).execute("DELETE FROM audit WHERE id >= ?", (head[0],)))
    with eng.store.reading() as c:
        problems = check_case_heads(c)
    assert len(problems) == 1 and f"forget case {res.request_id}" in problems[0] and "gone" in problems[0]
