"""Issue 22, "Forget: the proof covers what it claims": Unicode forms are one text to a forget
(scope, byte scan, redaction, search); short pieces (a PIN) are scanned and redacted, or the case
says they were not checked; the engine's own processes (the Hermes provider's prefetch cache and
session notes, `remember` through any door) never bring forgotten text back; temporary files of a
killed export or migrate are cleaned at next start and seen by a forget's scan; a verified case
re-verifies by keyed fingerprints once its sealed text is gone."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest

from engine import Forgotten, HashEmbedder, open_engine
from engine.forget.scan import bounded
from tests.direct_sql import direct
from tests.engine.forget.test_forget_reach_and_resume import every_text, file_bytes

pytestmark = pytest.mark.backends

NAME = "Zoë Müller-Schäfer"
UPPER = "ZOË MÜLLER-SCHÄFER"
WIDE = "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in UPPER)  # ＺＯË ＭÜＬＬＥＲ-...
DECOMPOSED = unicodedata.normalize("NFD", NAME)


def _forms_in(data: bytes) -> list[str]:
    return [f for f in (NAME, UPPER, WIDE, DECOMPOSED, NAME.lower()) if f.encode() in data]


# -- Unicode: one text, whatever its form -------------------------------------------------------------
def test_a_forget_reaches_upper_case_full_width_and_decomposed_forms(eng, db_path, backend):
    kept = eng.add_memory("The quarterly report is due on Friday", dedup=False)
    eng.add_memory(f"Send the contract to {UPPER} before the audit", dedup=False)
    eng.add_memory(f"Invoice addressed to {WIDE} in Bern", dedup=False)
    eng.add_memory(f"Call {DECOMPOSED} about the lease", dedup=False)
    sid = eng.sessions.add(agent="atlas", metadata={"note": f"spoke with {UPPER} yesterday afternoon"})
    pv = eng.forget.run("query", NAME, "erasure request", preview=True)
    assert pv.counts["memories"] == 3, pv.items  # LIKE alone found none of them
    res = eng.forget.execute(pv.request.id)
    assert [m.id for m in eng.memories.list()] == [kept]
    live = every_text(db_path) if backend == "sqlite" else json.dumps(eng.sessions.get(sid).session.metadata)
    assert _forms_in(live.encode()) == []  # the kept session's note was redacted in its form
    logical = res.verification.levels[0]
    if backend == "sqlite":
        assert res.status == "verified" and res.residue == 0, res.verification.files
        assert _forms_in(file_bytes(db_path)) == []
    else:
        assert logical.name == "logical" and logical.residue == 0


def test_search_folds_full_width_and_upper_case_queries(eng):
    mid = eng.add_memory(f"Meeting notes: {NAME} signs the lease", dedup=False)
    for q in (UPPER, WIDE, NAME):
        hits = eng.search(q, k=5, mode="keyword", record_access=False).hits
        assert [h.id for h in hits] == [mid], q


def test_the_byte_scan_finds_every_written_form():
    from engine.forget.scan import scan_bytes
    from engine.forget.verify import byte_windows

    wins, short, pieces = byte_windows([f"contract for {NAME} signed"])
    for form in (UPPER, WIDE, DECOMPOSED):
        page = f"xx contract for {form} signed xx".encode()
        assert scan_bytes(page, wins, short, set(), pieces=pieces) > 0, form


# -- short pieces -------------------------------------------------------------------------------------
@pytest.mark.sqlite_only("the SQLite file's bytes are the level a short piece is scanned in")
def test_a_four_digit_pin_is_redacted_and_scanned(eng, db_path):
    eng.add_memory("The door PIN is 4821", dedup=False)
    keep = eng.add_memory("Build 148213 shipped; hash 9f4821ab0c77e", dedup=False)
    sid = eng.sessions.add(agent="atlas", metadata={"note": "gave the PIN 4821 to the courier"})
    res = eng.forget.run("query", "4821", "a PIN", match="substring")
    # "148213" and the hash matched the query's substring scope too (asked for: the default matches
    # whole words only): a substring scope is the operator's
    assert res.status == "verified" and res.residue == 0, res.verification.files
    note = eng.sessions.get(sid).session.metadata["note"]
    assert "4821" not in note and "[forgotten]" in note
    assert not re.search(rb"(?<![0-9])4821(?![0-9])", file_bytes(db_path))
    assert res.verification.checked_substrings > 0
    assert keep not in {m.id for m in eng.memories.list()}


def test_the_short_piece_rule_counts_tokens_only():
    assert bounded(b"the PIN 4821.", b"4821") == 1
    assert bounded(b'"4821semantic', b"4821") == 1  # glued to the next column's word: still counted
    assert bounded(b"build 148213", b"4821") == 0
    assert bounded(b"hash 9f4821ab0c77e", b"4821") == 0  # inside a hash
    assert bounded(b"Mr JKL, Mrs JKLM", b"JKL") == 1


def test_a_piece_too_short_to_scan_says_so_in_the_levels(eng):
    mid = eng.add_memory("42", dedup=False)
    res = eng.forget.run("memory", [mid], "the answer")
    names = {lv.name: lv for lv in res.verification.levels}
    assert not names["short pieces"].checked
    assert names["short pieces"].note == "not checked: piece too short (2 chars)"
    assert res.counts["levels"]["short pieces"] == "not checked: piece too short (2 chars)"


# -- the engine's own processes ------------------------------------------------------------------------
def test_remember_through_any_door_refuses_tombstoned_text(eng, tmp_path, backend, db_path, capsys):
    text = f"{NAME} lives at Rosenweg 4"
    eng.add_memory(text, dedup=False)
    eng.forget.run("query", NAME, "erasure request")
    before = direct(eng.store).one("SELECT count(*) FROM memories")[0]
    with pytest.raises(Forgotten, match="^not remembered: a forget removed this text") as ei:
        eng.add_memory(f"  {text.upper()} ", dedup=False)  # folded and trimmed, still the text
    assert "\n" not in str(ei.value)
    refused = direct(eng.store).all("SELECT summary FROM audit WHERE action = 'remember-refused'")
    assert len(refused) == 1 and NAME not in refused[0][0]
    if backend == "sqlite":  # the MCP door, through the provider's in-process server
        from console.hermes.provider import MemconsoleProvider

        (tmp_path / "plugin").mkdir()
        (tmp_path / "plugin" / "memconsole.json").write_text(json.dumps({"db": str(db_path)}))
        p = MemconsoleProvider(tmp_path / "plugin")
        p.initialize("s-1", hermes_home=str(tmp_path), platform="cli")
        out = json.loads(p.handle_tool_call("remember", {"content": text}))
        p.shutdown()
        assert "not remembered: a forget removed this text" in out["error"], out
        from console.cli import main  # the command line's `add`

        capsys.readouterr()
        assert main(["--db", str(db_path), "add", text]) != 0
        err = capsys.readouterr().err.strip()
        assert "not remembered: a forget removed this text" in err and "\n" not in err, err
    assert direct(eng.store).one("SELECT count(*) FROM memories")[0] == before


@pytest.mark.sqlite_only("the Hermes provider is configured with a database file")
def test_hermes_prefetch_and_session_notes_never_bring_forgotten_text_back(tmp_path, db_path):
    from console.hermes.provider import MemconsoleProvider

    with open_engine(db_path, embedder=HashEmbedder(), actor="operator") as op:
        op.add_memory(f"{NAME} prefers the blue invoice template", dedup=False)
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "memconsole.json").write_text(json.dumps({"db": str(db_path)}))
    p = MemconsoleProvider(tmp_path / "plugin")
    p.initialize("s-1", hermes_home=str(tmp_path), platform="cli", agent_identity="coder")
    p.sync_turn(f"Please email {NAME} the invoice", "done", session_id="s-1")
    p.queue_prefetch("invoice template", session_id="s-1")
    assert p.flush(timeout=60) and p.failures == 0, p.last_error
    assert ("s-1", "invoice template") in p._prefetched  # built and cached before the forget
    with open_engine(db_path, embedder=HashEmbedder(), actor="operator") as op:
        op.forget.run("query", NAME, "erasure request")
    assert NAME not in p.prefetch("invoice template", session_id="s-1")
    p.on_session_end([{"role": "user", "content": f"Please email {NAME} the invoice"}])
    assert p.flush(timeout=60) and p.failures == 0, p.last_error
    p.shutdown()
    with open_engine(db_path, embedder=HashEmbedder(), actor="operator") as op:
        notes = direct(op.store).all("SELECT content FROM memories WHERE category = 'context'")
        assert notes and all(NAME not in n[0] and "Last request" not in n[0] for n in notes)
        assert all(NAME not in m.content for m in op.memories.list())


# -- re-verify after the seal is gone --------------------------------------------------------------------
@pytest.fixture
def quiet_eng(db_path, clock):
    """On PostgreSQL, without the host-files level (its WAL keeps the text until recycled, so a
    case there stays `executed`): the logical level alone lets the case reach `verified`."""
    from engine.config import ForgetSettings, Settings

    e = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester",
                    settings=Settings(forget=ForgetSettings(host_files=False)))  # fmt: skip
    yield e
    e.close()


def test_reverify_after_the_seal_is_gone_reports_text_that_came_back(quiet_eng):
    eng = quiet_eng
    secret = "The vault on Rosenweg opens with the phrase amber falcon ninety"
    eng.add_memory(secret, dedup=False)
    eng.add_memory("The quarterly report is due on Friday", dedup=False)
    res = eng.forget.run("query", "amber falcon", "erasure request")
    assert res.status == "verified"
    again = eng.forget.verify(res.request_id)
    assert again.residue == 0 and again.levels[0].name == "recurrence" and again.levels[0].checked
    prints = json.dumps(eng.forget.get(res.request_id).selected["prints"])
    assert "amber" not in prints and "vault" not in prints  # keyed fingerprints, not the text
    # the text comes back by a path that checks no tombstone (a session's title, in upper case)
    eng.sessions.add(agent="atlas", title=f"copied: {secret.upper()} (from an old backup)")
    back = eng.forget.verify(res.request_id)
    assert back.residue > 0 and back.levels[0].residue == back.residue
    assert eng.forget.get(res.request_id).residue == back.residue


# -- temporary files of bulk copies -------------------------------------------------------------------
@pytest.mark.sqlite_only("a killed export of a database file; a server's home is swept by its next copy")
def test_a_killed_exports_temp_folder_is_private_and_removed_at_next_start(db_path, tmp_path):
    import os
    import signal
    import stat
    import time

    from tests.engine.forget.test_forget_reach_and_resume import child

    marker = tmp_path / "exporting"
    p = child(
        f"""
        e = open_engine(DB, embedder=HashEmbedder())
        e.add_memory("{NAME} signed the lease", dedup=False)
        def slow(n, total):
            open({str(marker)!r}, "w").close()
            time.sleep(120)
        e.importers.export_jsonl({str(tmp_path / "out.jsonl")!r}, progress=slow)
        """,
        db_path,
    )
    try:
        deadline = time.time() + 60
        while not marker.exists() and p.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert marker.exists(), p.stderr.read().decode() if p.poll() is not None else "no marker"
        left = list((db_path.parent / "tmp").iterdir())
        assert len(left) == 1 and left[0].name.startswith(f"{p.pid}-")
        assert stat.S_IMODE(left[0].stat().st_mode) == 0o700
        assert [stat.S_IMODE(f.stat().st_mode) for f in left[0].iterdir()] == [0o600]
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert list((db_path.parent / "tmp").iterdir()) == left  # kill -9: nothing could remove it
    assert not (tmp_path / "out.jsonl").exists()
    open_engine(db_path, embedder=HashEmbedder()).close()  # the next start sweeps it
    assert list((db_path.parent / "tmp").iterdir()) == []


def test_a_forgets_scan_covers_a_temp_copy_it_finds(eng, db_path, backend):
    import os

    from engine.paths import home_of

    eng.add_memory(f"{NAME} signed the lease on Rosenweg", dedup=False)
    live = home_of(db_path) / "tmp" / f"{os.getpid()}-deadbeef0000"  # an export still running
    live.mkdir(parents=True, mode=0o700)
    (live / "export.jsonl").write_text(json.dumps({"content": f"{NAME} signed the lease on Rosenweg"}))
    try:
        res = eng.forget.run("query", NAME, "erasure request")
        assert res.status == "executed" and res.residue > 0
        found = {k: v for lv in res.verification.levels for k, v in lv.found.items()}
        assert any("export.jsonl" in k and v > 0 for k, v in found.items()), res.verification.levels
    finally:
        (live / "export.jsonl").unlink()
        live.rmdir()
    if backend == "sqlite":  # the copy gone, the case verifies (a server's WAL: see quiet_eng)
        assert eng.forget.verify(res.request_id).residue == 0


def test_reverify_sees_a_short_piece_come_back_as_a_token(quiet_eng):
    eng = quiet_eng
    eng.add_memory("The door PIN is 4821", dedup=False)
    res = eng.forget.run("query", "4821", "a PIN")
    assert res.status == "verified"
    eng.sessions.add(agent="atlas", title="build 148213 of the app")  # not the PIN
    assert eng.forget.verify(res.request_id).residue == 0
    eng.sessions.add(agent="atlas", title="the PIN is 4821 again")
    assert eng.forget.verify(res.request_id).residue == 1
