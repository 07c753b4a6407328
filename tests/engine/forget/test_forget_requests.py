"""Forget requests: the cascade, physical removal, byte-level verification, hashes not text."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from engine import InvalidInput, NotFound
from engine.storage.sqlite.store import connect
from tests.direct_sql import direct
from tests.engine.curator_helpers import OTHER, add_rule

pytestmark = pytest.mark.backends

CANARY = "Canary-Zebra-7f3a9c-Quokka"
SECRET = f"The locker combination {CANARY} opens the east door"
TWIN = f"The locker combination {CANARY} opens the east door!"


def files_of(db_path: Path) -> list[Path]:
    out = [Path(f"{db_path}{s}") for s in ("", "-wal", "-shm")]
    out += [p for p in (db_path.parent / "curator").rglob("*") if p.is_file()]
    return [p for p in out if p.exists()]


def windows(text: str, n: int = 12) -> set[bytes]:
    b = text.encode()
    return {b[i : i + n] for i in range(len(b) - n + 1)}


def residue(db_path: Path, text: str) -> list[str]:
    """Independent of the engine: which files still hold any 12-byte piece of `text`."""
    bad = []
    for f in files_of(db_path):
        data = f.read_bytes()
        low = data.lower()
        if any(w in data or w.lower() in low for w in windows(text)):
            bad.append(f.name)
    return bad


@pytest.mark.sqlite_only("scans or opens the SQLite file and its WAL")
def test_forget_query_removes_every_copy_and_verifies(eng, db_path):
    sid = eng.sessions.add(agent="atlas", title="locker chat")
    msg = eng.sessions.add_message(sid, "user", f"please remember {CANARY} for me")
    a = eng.add_memory(SECRET, agent="atlas", session_id=sid, message_id=msg, dedup=False)
    b = eng.add_memory(TWIN, agent="atlas", dedup=False)
    keep = eng.add_memory(OTHER, agent="atlas", dedup=False)
    eng.memories.edit(keep, OTHER + " (and Mondays)")
    p = eng.curator.approve(eng.curator.run().proposals[0].id)
    assert eng.search(CANARY, record_access=False).hits[0].id == p.result_id
    assert residue(db_path, CANARY)  # it is really there before

    pv = eng.forget.run("query", CANARY, "user asked", preview=True)
    assert pv.request.status == "previewed"
    assert {(i.kind, i.id) for i in pv.items} == {
        ("memory", str(a)),
        ("memory", str(b)),
        ("memory", str(p.result_id)),
        ("message", str(msg)),
    }
    res = eng.forget.execute(pv.request.id)
    assert res.status == "verified" and res.residue == 0
    assert res.counts["memories"] == 3 and res.counts["messages"] == 1 and res.counts["proposals"] == 1
    assert res.verification.wal_truncated and res.verification.checked_substrings > 0
    assert residue(db_path, CANARY) == [] and residue(db_path, SECRET) == []
    # single FTS terms are shorter than a window: the merged segments must not keep them either
    assert not any(b"quokka" in f.read_bytes().lower() for f in files_of(db_path))
    assert eng.search(CANARY, mode="keyword", record_access=False).hits == []
    assert not any(CANARY in h.content for h in eng.search(CANARY, record_access=False).hits)
    assert eng.sessions.search_messages(CANARY) == []
    ex = eng.explain(CANARY, keep)
    assert ex.bm25_rank is None
    assert eng.memories.get(keep).content.startswith(OTHER)  # untouched
    req = eng.forget.get(res.request_id)
    # keyed hashes (issue 12): a plain sha256 of the query or content is a dictionary away from it
    from engine.forget import tombstones
    from engine.forget.service import query_digest

    assert req.scope_value == query_digest(CANARY)
    assert hashlib.sha256(CANARY.encode()).hexdigest() not in req.scope_value
    stones = direct(eng.store).all("SELECT * FROM tombstones WHERE request_id = ?", (req.id,))
    assert {(s["target_kind"], s["content_hash"]) for s in stones} >= {("memory", tombstones.digest(SECRET))}
    assert all(s["content_sha256"] == "" for s in stones)
    entries = eng.audit.log(limit=1000)
    assert "forget" in [e.action for e in entries]
    assert not any(CANARY in str(e.summary) or CANARY in e.reason for e in entries)
    assert eng.audit.verify().ok  # redaction re-chained the trail


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_forgetting_a_source_forgets_the_merge_and_revives_the_other_source(eng):
    a = eng.add_memory(SECRET, dedup=False)
    b = eng.add_memory(TWIN, dedup=False)
    p = eng.curator.run().proposals[0]
    assert p.members == [a, b]
    merged = eng.curator.approve(p.id, text=SECRET).result_id
    res = eng.forget.run("memory", [a], "gdpr")
    assert res.status == "verified"
    assert res.counts["derived_memories"] == 1 and res.counts["revived_sources"] == 1
    for gone in (a, merged):
        with pytest.raises(NotFound):
            eng.memories.get(gone)
    revived = eng.memories.get(b)
    assert revived.tier == "active" and revived.absorbed_into is None
    assert eng.curator.list() == []  # its snapshot held the text


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_forgetting_a_merged_memory_by_id_takes_its_sources(eng):
    a = eng.add_memory(SECRET, dedup=False)
    b = eng.add_memory(TWIN, dedup=False)
    merged = eng.curator.approve(eng.curator.run().proposals[0].id).result_id
    res = eng.forget.run("memory", [merged], "gdpr")
    assert res.counts["merged_sources"] == 2 and res.residue == 0
    assert direct(eng.store).one("SELECT count(*) FROM memories")[0] == 0
    assert {a, b}


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_session_scope_takes_messages_and_derived_memories(eng, db_path):
    sid = eng.sessions.add(agent="atlas", title="private")
    eng.sessions.add_messages(
        sid,
        [
            {"role": "user", "content": f"my code is {CANARY}"},
            {"role": "assistant", "content": "Noted, I will keep the locker code safe."},
        ],
    )
    eng.add_memory(SECRET, session_id=sid, dedup=False)
    other = eng.sessions.add(agent="atlas", title="public")
    eng.sessions.add_message(other, "user", "what is the weather like")
    res = eng.forget.run("session", sid, "user left")
    assert res.counts["sessions"] == 1 and res.counts["messages"] == 2 and res.counts["memories"] == 1
    assert res.residue == 0 and residue(db_path, CANARY) == []
    with pytest.raises(NotFound):
        eng.sessions.get(sid)
    assert len(eng.sessions.get(other).messages) == 1


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_agent_scope_takes_everything_of_theirs_only(eng):
    eng.add_memory(SECRET, agent="scout", dedup=False)
    add_rule(eng, f"Never reveal {CANARY}", agent="scout")
    s = eng.sessions.add(agent="scout")
    eng.sessions.add_message(s, "user", "hello scout")
    kept = eng.add_memory(OTHER, agent="atlas", dedup=False)
    res = eng.forget.run("agent", "scout", "agent decommissioned")
    assert res.counts["memories"] == 1 and res.counts["rules"] == 1 and res.counts["sessions"] == 1
    assert res.status == "verified"
    assert [m.id for m in eng.memories.list()] == [kept]


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_promoted_rule_is_forgotten_with_its_memory(eng):
    m = eng.add_memory(SECRET, category="learning", dedup=False)
    for _ in range(3):
        eng.memories.reinforce(m)
    prom = [p for p in eng.curator.run().proposals if p.kind == "promote"][0]
    rule = eng.curator.approve(prom.id).result_id
    res = eng.forget.run("memory", [m], "gdpr")
    assert res.counts["rules"] == 1 and res.residue == 0
    assert direct(eng.store).one("SELECT count(*) FROM rules WHERE id = ?", (rule,))[0] == 0


def test_query_execute_on_a_chosen_subset(eng):
    a = eng.add_memory(SECRET, dedup=False)
    b = eng.add_memory(f"{CANARY} is also the name of our wifi", dedup=False)
    pv = eng.forget.run("query", CANARY, "partial", preview=True)
    res = eng.forget.execute(pv.request.id, memory_ids=[a])
    assert res.counts["memories"] == 1
    assert eng.memories.get(b)  # kept by the operator's choice...
    assert res.residue > 0 and res.status == "executed"  # ...so the query text is still stored: honest
    again = eng.forget.execute(pv.request.id)  # issue 12: executing again finishes/re-verifies
    assert again.status == "executed" and again.residue > 0
    with pytest.raises(InvalidInput):  # but never widens an executed case
        eng.forget.execute(pv.request.id, memory_ids=[b])
    with pytest.raises(InvalidInput, match="not in this request"):
        eng.forget.execute(eng.forget.run("query", "wifi", "x", preview=True).request.id, memory_ids=[999])


@pytest.mark.sqlite_only("scans or opens the SQLite file and its WAL")
def test_verification_catches_residue_in_reports_and_an_untruncated_wal(eng, db_path):
    eng.add_memory(SECRET, dedup=False)
    eng.add_memory(TWIN, dedup=False)
    eng.curator.run()
    req = eng.forget.run("query", CANARY, "test", preview=True).request
    reader = connect(db_path)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchone()  # pins a WAL snapshot
    res = eng.forget.execute(req.id)
    assert res.verification.wal_truncated is False and res.status == "executed"
    reader.execute("COMMIT")
    reader.close()
    leak = db_path.parent / "curator" / "leak.md"
    leak.write_text(f"someone pasted {SECRET} here")
    ver = eng.forget.verify(req.id)
    assert ver.residue >= 1 and ver.files["curator/leak.md"] >= 1
    assert eng.forget.get(req.id).status == "executed"
    leak.unlink()
    ver = eng.forget.verify(req.id)
    assert ver.residue == 0 and ver.wal_truncated
    assert eng.forget.get(req.id).status == "verified"


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_requests_are_tracked_cases(eng, clock):
    eng.add_memory(SECRET, dedup=False)
    with pytest.raises(InvalidInput):
        eng.forget.open("memory", [1], "  ")
    with pytest.raises(InvalidInput):
        eng.forget.open("planet", "x", "r")
    with pytest.raises(NotFound):
        eng.forget.run("memory", [42], "r")
    req = eng.forget.open("query", CANARY, "ticket 7", deadline="2026-01-15")
    assert req.status == "open" and req.requested_by == "tester"
    assert req.deadline == clock.now() + 14 * 86400
    assert [r.id for r in eng.forget.list(status="open")] == [req.id]
    assert eng.counts().open_forget_requests == 1
    res = eng.forget.execute(req.id)  # an open case can be executed directly
    assert res.status == "verified"
    assert eng.forget.list()[0].status == "verified"


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_user_scope(eng):
    eng.add_memory(SECRET, user="kim", dedup=False)
    s = eng.sessions.add(user="kim", title="kim's chat")
    eng.sessions.add_message(s, "user", "hello from kim")
    kept = eng.add_memory(OTHER, user="lee", dedup=False)
    res = eng.forget.run("user", "kim", "account deleted")
    assert res.counts["memories"] == 1 and res.counts["sessions"] == 1 and res.status == "verified"
    assert [m.id for m in eng.memories.list()] == [kept]
    with pytest.raises(NotFound):
        eng.forget.run("user", "nobody", "x")


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_common_words_of_the_schema_are_not_residue(eng):
    m = eng.add_memory("Checking content created session memories metadata", dedup=False)
    res = eng.forget.run("memory", [m], "words that also name columns")
    assert res.status == "verified" and res.residue == 0
    assert res.verification.skipped_common > 0


@pytest.mark.pg_xfail(
    "forget on PostgreSQL (14B): the host-files level finds the text in WAL segments, so the case stays 'executed'"
)
def test_report_boilerplate_is_not_residue(eng):
    eng.add_memory(TWIN_A_NOTE, dedup=False)
    eng.add_memory(TWIN_A_NOTE + "!", dedup=False)
    m = eng.add_memory("Phone the operator", dedup=False)  # "operator" is a word of every report
    eng.curator.run()
    res = eng.forget.run("memory", [m], "shares the report's own sentences")
    assert res.status == "verified" and res.residue == 0


TWIN_A_NOTE = "The release checklist lives in the wiki under ops/release"


def test_redaction_leaves_no_stray_word_beside_an_earlier_marker():
    from engine.forget.verify import char_windows, redact

    sec = char_windows(["Never deploy on a Friday afternoon unless the on-call agrees"])
    assert (
        redact("- rule 81: [forgotten]agrees\n- rule 9: keep", sec)
        == "- rule 81: [forgotten]\n- rule 9: keep"
    )
    assert redact("say: never deploy on a Friday afternoon, ok", sec) == "say: [forgotten], ok"
    assert redact("nothing to do here", sec) == "nothing to do here"


@pytest.mark.sqlite_only("scans or opens the SQLite file and its WAL")
def test_a_brief_reader_is_waited_for(eng, db_path):
    import threading

    eng.add_memory(SECRET, dedup=False)
    reader = connect(db_path)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchone()
    threading.Timer(0.5, lambda: reader.execute("COMMIT")).start()
    res = eng.forget.run("query", CANARY, "brief reader")
    reader.close()
    assert res.verification.wal_truncated and res.status == "verified"
