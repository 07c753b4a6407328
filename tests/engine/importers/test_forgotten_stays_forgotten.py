"""Issue 12 "Trust", imports: what was forgotten does not come back — not by re-importing the same
Hermes home, a copy of it elsewhere, a JSONL export written before the forget, nor by ingest."""

from __future__ import annotations

import json
import shutil

import pytest

from engine import FixedClock, HashEmbedder, open_engine
from tests.direct_sql import direct
from tests.engine.hermes_fixture import HermesHome
from tests.engine.importers.test_import_input_checks import T, counts

pytestmark = pytest.mark.backends

# -- 4: what was forgotten does not come back ----------------------------------------------------
CANARY = "vault-4417"


def canary_home(root) -> HermesHome:
    h = HermesHome(root, version=30)
    h.session("s1", started=T, ended=T + 600, title="daily work")
    h.session("s2", started=T + 700, ended=T + 900, title="the secret session")
    h.message("s1", "user", f"remember the {CANARY} code", T + 1)
    h.message("s1", "assistant", "noted, I will keep it", T + 2)
    h.message("s2", "user", "only in the second session: nebula-88", T + 701)
    h.memories(
        [f"The {CANARY} opens the back door.", "CI runs on the self-hosted runner."],
        user=["Prefers short answers."],
    )
    h.skill("open-vault", f"Open the {CANARY}", f"1. Enter {CANARY}\n2. Turn the handle\n")
    h.skill("deploy", "Deploy the blog", "1. pnpm build\n2. upload\n")
    return h


def residue(eng) -> list[str]:
    """Every place an imported canary could live, as 'table.column'."""
    out = []
    for table, cols in (
        ("memories", ("content", "metadata")),
        ("messages", ("content", "metadata")),
        ("sessions", ("id", "title", "metadata")),
        ("flows", ("name", "description", "steps", "triggers")),
        ("rules", ("text",)),
    ):
        for c in cols:
            for needle in (CANARY, "nebula-88", "secret session"):
                if direct(eng.store).one(f"SELECT 1 FROM {table} WHERE {c} LIKE ?", (f"%{needle}%",)):
                    out.append(f"{table}.{c}:{needle}")
    return out


@pytest.fixture
def forgotten_home(eng, tmp_path):
    """A Hermes home imported, then forgotten by query (the canary) and by session (s2)."""
    h = canary_home(tmp_path / "hermes")
    h.close()  # closed before anything copies its files
    eng.importers.hermes(tmp_path / "hermes")
    eng.rules.add(f"Never say {CANARY}")
    assert residue(eng)
    export = tmp_path / "before.jsonl"
    eng.importers.export_jsonl(export)  # written BEFORE the forget
    eng.forget.run("query", CANARY, "user asked")
    eng.forget.run("session", "s2", "user asked")
    assert residue(eng) == []
    return tmp_path / "hermes", export


def test_reimporting_the_same_hermes_home_brings_nothing_back(eng, forgotten_home):
    home, _ = forgotten_home
    before = counts(eng)[:5]
    s = eng.importers.hermes(home)
    assert residue(eng) == [] and counts(eng)[:5] == before, s
    assert any("forgotten" in r for r in s.skipped), s.skipped


def test_a_copy_of_the_home_elsewhere_brings_nothing_back_nor_duplicates(eng, forgotten_home, tmp_path):
    home, _ = forgotten_home
    copy = tmp_path / "elsewhere" / "hermes-copy"
    shutil.copytree(home, copy)
    before = counts(eng)[:5]
    s = eng.importers.hermes(copy, agent="hermes")
    assert residue(eng) == [], s
    assert counts(eng)[:5] == before, s.added  # nothing new, nothing twice


def test_a_jsonl_export_written_before_the_forget_brings_nothing_back(eng, forgotten_home):
    _, export = forgotten_home
    before = counts(eng)[:5]
    s = eng.importers.jsonl(export)
    assert residue(eng) == [] and counts(eng)[:5] == before, s
    assert any("forgotten" in r or "deleted" in r for r in s.skipped), s.skipped


def test_the_same_export_into_a_fresh_database_restores_it(forgotten_home, tmp_path):
    """A fresh database holds no tombstones: an export is a backup the forget could not reach
    (the forget case says so); restoring it elsewhere is the operator's deliberate act."""
    _, export = forgotten_home
    fresh = open_engine(tmp_path / "fresh.db", embedder=HashEmbedder(), clock=FixedClock(T), actor="restorer")
    try:
        fresh.importers.jsonl(export)
        assert residue(fresh)
    finally:
        fresh.close()


def test_ingest_brings_no_forgotten_session_message_or_memory_back(eng, forgotten_home, tmp_path):
    p = tmp_path / "again.jsonl"
    p.write_text(
        "\n".join(
            json.dumps(r)
            for r in (
                {"type": "session", "id": "s2", "title": "again"},
                {"type": "message", "session_id": "s2", "content": "only in the second session: nebula-88"},
                {"type": "message", "session_id": "s1", "content": f"remember the {CANARY} code"},
                {"type": "memory", "content": f"The {CANARY} opens the back door."},
                {"type": "memory", "content": "a new fact"},
            )
        )
        + "\n"
    )
    out = eng.importers.ingest(p)
    assert residue(eng) == [] and out["skipped_forgotten"] == 4
    assert out["added"]["memories"] == 1


def test_a_new_session_is_not_muted_by_a_forgotten_sessions_common_words(eng, tmp_path):
    """A forget by session keeps a content hash of each message it removed; a conversation this
    database never held is not that session, so its "thanks" comes in."""
    h = HermesHome(tmp_path / "hermes", version=2)
    h.session("old", started=T)
    h.message("old", "user", "thanks", T + 1)
    h.close()
    eng.importers.hermes(tmp_path / "hermes")
    eng.forget.run("session", "old", "user asked")
    p = tmp_path / "new.jsonl"
    p.write_text('{"type":"session","id":"new"}\n{"type":"message","session_id":"new","content":"thanks"}\n')
    assert eng.importers.ingest(p)["added"]["messages"] == 1
    h2 = HermesHome(tmp_path / "hermes2", version=2)
    h2.session("new2", started=T + 50)
    h2.message("new2", "user", "thanks", T + 51)
    h2.close()
    assert eng.importers.hermes(tmp_path / "hermes2").added.get("messages") == 1


def test_a_scrubbed_system_prompt_stays_scrubbed_while_the_session_moves_on(eng, tmp_path):
    h = HermesHome(tmp_path / "hermes", version=2)
    h.session("s1", started=T)
    h.conn.execute(
        "UPDATE sessions SET system_prompt = ? WHERE id = 's1'",
        (f"You are Hermes. The door code is {CANARY}.",),
    )
    h.message("s1", "user", "hello", T + 1)
    eng.importers.hermes(tmp_path / "hermes")
    eng.forget.run("query", CANARY, "user asked")
    assert residue(eng) == []
    h.message("s1", "assistant", "hi again", T + 2)  # the session goes on
    h.conn.execute("UPDATE sessions SET message_count = 2 WHERE id = 's1'")
    h.close()
    s = eng.importers.hermes(tmp_path / "hermes")
    assert s.added.get("messages") == 1 and residue(eng) == []
    meta = json.loads(direct(eng.store).one("SELECT metadata FROM sessions WHERE id = 's1'")[0])
    assert meta["hermes"]["message_count"] == 2
