"""Importing a Hermes agent home: counts, lineage, skipped rows, idempotence, new rows only after
the agent wrote more, un-checkpointed WAL rows, and a source that stays byte-identical."""

from __future__ import annotations

import json

import pytest

from engine import ImportFailed
from engine.importers.hermes_files import read_files
from tests.direct_sql import direct
from tests.engine.hermes_fixture import HermesHome, file_digests

pytestmark = pytest.mark.backends

T = 1_767_000_000.0  # 2025-12-29: before the engine's fixed clock


def table_counts(eng) -> dict[str, int]:
    return {
        t: direct(eng.store).one(f"SELECT count(*) FROM {t}")[0]
        for t in ("sessions", "messages", "memories", "flows", "audit")
    }


def build_v2(root) -> HermesHome:
    h = HermesHome(root, version=2)
    h.session("s1", started=T, ended=T + 600, end_reason="compression")
    h.session("s2", started=T + 600, parent="s1", ended=T + 900, end_reason="branched")
    h.session("s3", started=T + 900, parent="s2", source="telegram")
    h.message("s1", "user", "Deploy the blog with pnpm please", T + 1)
    h.message(
        "s1",
        "assistant",
        "Running pnpm build",
        T + 2,
        tool_calls=json.dumps([{"id": "c1", "function": {"name": "terminal", "arguments": "{}"}}]),
    )
    h.message("s1", "tool", "build ok", T + 3, tool_name="terminal", tool_call_id="c1")
    h.message("s2", "user", "Now write the changelog", T + 601)
    h.message("s3", "user", "从电报发来的消息", T + 901)
    h.memories(
        [
            "The blog deploys with pnpm, never npm.",
            "Staging lives at staging.example.org.\nIt needs the VPN.",
            "CI runs on the self-hosted runner.",
        ],
        user=["Prefers short answers.", "Works in Berlin (CET)."],
    )
    h.skill(
        "deploy-blog",
        "Build and deploy the blog",
        "# Deploy\n\n1. Run `pnpm build`\n2. Upload **dist/** to the server\n3. Purge the CDN\n",
        category="devops",
    )
    h.skill(
        "write-changelog",
        "Draft a changelog from git log",
        "## Collect commits\ntext\n## Group by type\n## Write the entry\n",
    )
    h.skill("old-report", "A report nobody reads", "- gather\n- send\n", archived_stamp="20251201093000")
    h.skill("web-search", "Bundled search skill", "1. search\n")
    h.bundled(["web-search"])
    h.usage(
        {
            "deploy-blog": {
                "use_count": 7,
                "view_count": 2,
                "patch_count": 1,
                "state": "active",
                "pinned": True,
                "last_used_at": "2025-12-28T10:00:00Z",
                "last_patched_at": "2025-12-20T10:00:00Z",
                "created_at": "2025-11-01T09:00:00Z",
            },
            "write-changelog": {"use_count": 0, "state": "stale", "last_viewed_at": "2025-11-15T08:00:00Z"},
            "old-report": {"state": "archived", "archived_at": "2025-12-01T09:30:00Z"},
        }
    )
    h.curator_run(
        "20251215-030000",
        {
            "started_at": "2025-12-15T03:00:00Z",
            "duration_seconds": 12.5,
            "model": "hermes-4",
            "provider": "nous",
            "auto_transitions": {"checked": 4, "marked_stale": 1, "archived": 1, "reactivated": 0},
            "counts": {
                "before": 5,
                "after": 3,
                "archived_this_run": 1,
                "consolidated_this_run": 1,
                "pruned_this_run": 1,
            },
            "archived": [{"name": "old-report", "reason": "unused for 30 days"}],
            "consolidated": [
                {"name": "deploy-site", "into": "deploy-blog", "source": "agent", "reason": "same procedure"}
            ],
            "pruned": [{"name": "tmp-notes", "source": "agent", "reason": "empty"}],
            "state_transitions": [{"name": "write-changelog", "from": "active", "to": "stale"}],
            "llm_summary": "Merged deploy skills.",
            "tool_calls": [],
        },
    )
    return h


def test_v2_home_imports_everything_and_leaves_the_source_untouched(eng, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    before = file_digests(h.root)
    s = eng.importers.hermes(h.root)
    assert file_digests(h.root) == before
    assert s.added["sessions"] == 3 and s.added["messages"] == 5
    assert s.added["memories"] == 5 and s.added["skills"] == 3 and s.added["flows"] == 3
    assert s.added["curator runs"] == 1 and s.added["curator audit rows"] == 5
    assert s.skipped == {"skill bundled with Hermes, never patched by the agent": 1}

    # lineage follows parent_session_id, and the parent's end_reason says why
    d2 = eng.sessions.get("s2")
    assert d2.parent.id == "s1" and d2.parent.metadata["hermes"]["end_reason"] == "compression"
    assert [c.id for c in d2.children] == ["s3"]
    assert d2.session.agent == "hermes" and d2.session.user == "u1"
    s1 = eng.sessions.get("s1")
    assert [m.role for m in s1.messages] == ["user", "assistant", "tool"]
    assert s1.messages[1].metadata["tool_calls"][0]["id"] == "c1"
    assert s1.messages[2].tool_name == "terminal" and s1.messages[0].at == T + 1
    assert s1.session.metadata["hermes"]["system_prompt"] == "You are Hermes."
    assert eng.sessions.search_messages("电报")[0].message.session_id == "s3"

    mems = {m.content: m for m in eng.memories.list()}
    staging = mems["Staging lives at staging.example.org.\nIt needs the VPN."]
    assert staging.kind == "semantic" and staging.user == ""
    assert mems["Prefers short answers."].category == "preference"
    assert mems["Prefers short answers."].user == "u1"  # the home's one user
    assert mems["Works in Berlin (CET)."].category == "fact"
    assert not any("old backup" in c for c in mems)


def test_skills_map_state_pin_steps_and_last_activity(eng, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    eng.importers.hermes(h.root, agent="ops-bot")
    skills = {m.metadata["hermes_skill"]: m for m in eng.memories.list() if m.kind == "procedural"}
    deploy = skills["deploy-blog"]
    assert deploy.agent == "ops-bot" and deploy.pinned and deploy.tier == "active"
    assert deploy.content.splitlines() == [
        "deploy-blog: Build and deploy the blog",
        "1. Run pnpm build",
        "2. Upload dist/ to the server",
        "3. Purge the CDN",
    ]
    assert deploy.metadata["skill_category"] == "devops" and deploy.access_count == 7
    from engine.clock import parse_time

    assert deploy.last_reinforced_at == parse_time("2025-12-28T10:00:00Z")
    assert deploy.created_at == parse_time("2025-11-01T09:00:00Z")
    assert (
        skills["write-changelog"].tier == "active" and skills["write-changelog"].metadata["state"] == "stale"
    )
    assert skills["old-report"].tier == "archived" and not skills["old-report"].pinned
    flows = {r["name"]: r for r in direct(eng.store).all("SELECT * FROM flows")}
    assert json.loads(flows["write-changelog"]["steps"]) == [
        "Collect commits",
        "Group by type",
        "Write the entry",
    ]
    assert flows["old-report"]["status"] == "disabled" and flows["deploy-blog"]["agent"] == "ops-bot"
    assert json.loads(flows["old-report"]["metadata"])["memory_id"] == skills["old-report"].id


def test_curator_reports_become_audit_rows_by_hermes_curator(eng, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    eng.importers.hermes(h.root)
    rows = direct(eng.store).all("SELECT * FROM audit WHERE actor = 'hermes-curator' ORDER BY id")
    by_action = {r["action"]: r for r in rows}
    assert set(by_action) == {
        "curator-run",
        "curator-archive",
        "curator-consolidate",
        "curator-prune",
        "curator-transition",
    }
    merge = by_action["curator-consolidate"]
    assert merge["target_id"] == "deploy-site" and json.loads(merge["summary"])["into"] == "deploy-blog"
    assert by_action["curator-prune"]["target_id"] == "tmp-notes"
    from engine.clock import parse_time

    assert all(r["at"] == parse_time("2025-12-15T03:00:00Z") for r in rows)


def test_same_home_twice_adds_nothing(eng, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    eng.importers.hermes(h.root)
    first = table_counts(eng)
    again = eng.importers.hermes(h.root)
    assert again.added == {} and again.updated == {}
    assert again.skipped["session already imported"] == 3
    assert again.skipped["memory entry already imported"] == 5
    assert again.skipped["skill unchanged"] == 3
    assert again.skipped["curator run already imported"] == 1
    after = table_counts(eng)
    assert after == {**first, "audit": first["audit"] + 1}  # only the import's own row


def build_later(root) -> HermesHome:
    h = HermesHome(root, version=30)
    ph = h.prompt("You are Hermes, long prompt v30.")
    h.session(
        "a1",
        started=T,
        title="Fix the CI",
        cwd="/src/app",
        git_branch="main",
        estimated_cost_usd=0.12,
        system_prompt_hash=ph,
        billing_mode="sub",
        ended=T + 100,
        end_reason="session_reset",
    )
    h.message("a1", "user", "CI is red", T + 1)
    h.message("a1", "assistant", "old draft", T + 2, active=0)
    h.message("a1", "assistant", "Looking at the runner logs", T + 3, reasoning="check logs first")
    h.message("a1", "system", "[context compacted]", T + 4, display_kind="hidden")
    h.hold_wal()
    # Everything below lives only in state.db-wal while the agent's connection is open.
    h.session("a2", started=T + 100, parent="a1", title="CI, continued", last_activity_at=T + 150)
    h.message("a2", "user", "Runner disk is full", T + 101, codex_items="[]")
    h.message("a2", "assistant", "Cleared the docker cache", T + 102)
    h.memories(["The CI runner needs a weekly docker prune."])
    return h


def test_later_schema_with_unchecked_wal_rows(eng, tmp_path):
    h = build_later(tmp_path / "hermes")
    wal = h.root / "state.db-wal"
    assert wal.exists() and wal.stat().st_size > 0
    # The premise: without its WAL the database file does not hold session a2 yet.
    import shutil

    import sqlean

    alone = tmp_path / "alone.db"
    shutil.copyfile(h.root / "state.db", alone)
    c = sqlean.connect(str(alone))
    assert c.execute("SELECT count(*) FROM sessions WHERE id = 'a2'").fetchone()[0] == 0
    c.close()
    before = file_digests(h.root)
    s = eng.importers.hermes(h.root)
    assert file_digests(h.root) == before  # -wal and -shm included
    assert s.added["sessions"] == 2 and s.added["messages"] == 4
    assert s.skipped == {"message superseded (active = 0)": 1, "message hidden (display_kind = hidden)": 1}
    a1 = eng.sessions.get("a1")
    assert a1.session.title == "Fix the CI"
    assert a1.session.metadata["hermes"]["system_prompt"] == "You are Hermes, long prompt v30."
    assert a1.session.metadata["hermes"]["cwd"] == "/src/app"
    assert "billing_mode" not in a1.session.metadata["hermes"]
    assert [m.content for m in a1.messages] == ["CI is red", "Looking at the runner logs"]
    assert a1.messages[1].metadata["reasoning"] == "check logs first"
    a2 = eng.sessions.get("a2")
    assert a2.parent.id == "a1" and [m.content for m in a2.messages] == [
        "Runner disk is full",
        "Cleared the docker cache",
    ]

    # The agent writes more: only the new rows come in.
    h.message("a2", "user", "Thanks, is it green now?", T + 200)
    h.session("a3", started=T + 300, parent="a2")
    h.message("a3", "user", "New day, new task", T + 301)
    h.end("a2", T + 250, "compression")
    h.memories(["The CI runner needs a weekly docker prune.", "Builds take 4 minutes."])
    h.skill("prune-docker", "Free runner disk", "1. docker system prune -af\n")
    n_before = table_counts(eng)
    s2 = eng.importers.hermes(h.root)
    assert s2.added == {"sessions": 1, "messages": 2, "memories": 1, "skills": 1, "flows": 1}
    assert s2.updated == {"sessions": 1}  # a2 ended meanwhile
    assert eng.sessions.get("a2").session.ended_at == T + 250
    assert [m.content for m in eng.sessions.get("a2").messages][-1] == "Thanks, is it green now?"
    assert table_counts(eng)["messages"] == n_before["messages"] + 2
    assert eng.importers.hermes(h.root).added == {}
    h.close()


def test_a_patched_skill_is_updated_not_duplicated(eng, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    eng.importers.hermes(h.root)
    h.skill(
        "deploy-blog",
        "Build and deploy the blog",
        "1. Run `pnpm build`\n2. Run the smoke test\n3. Upload dist/\n",
        category="devops",
    )
    s = eng.importers.hermes(h.root)
    assert s.added == {} and s.updated == {"skills": 1, "flows": 1}
    procs = [m for m in eng.memories.list() if m.metadata.get("hermes_skill") == "deploy-blog"]
    assert len(procs) == 1 and "2. Run the smoke test" in procs[0].content
    assert procs[0].embedded  # re-embedded with the (hash) model


def test_dry_run_writes_nothing(eng, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    s = eng.importers.hermes(h.root, dry_run=True)
    assert s.dry_run and s.added["sessions"] == 3
    assert table_counts(eng) == {"sessions": 0, "messages": 0, "memories": 0, "flows": 0, "audit": 0}


def test_corrupt_database_fails_cleanly_and_writes_nothing(eng, tmp_path):
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "state.db").write_bytes(b"this is not sqlite" * 100)
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("a fact")
    with pytest.raises(ImportFailed, match=r"state\.db: not a readable SQLite database"):
        eng.importers.hermes(home)
    assert table_counts(eng)["memories"] == 0 and table_counts(eng)["audit"] == 0


def test_unknown_schema_is_named(eng, tmp_path):
    import sqlean

    home = tmp_path / "hermes"
    home.mkdir()
    c = sqlean.connect(str(home / "state.db"))
    c.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, started_at REAL)")
    c.commit()
    c.close()
    with pytest.raises(ImportFailed, match=r"unknown schema: no messages table"):
        eng.importers.hermes(home)
    with pytest.raises(ImportFailed, match="not a Hermes home"):
        eng.importers.hermes(tmp_path)
    assert table_counts(eng)["sessions"] == 0


def test_profile_folder_names_the_agent_and_bad_usage_json_is_a_warning(eng, tmp_path):
    home = tmp_path / ".hermes" / "profiles" / "coder"
    home.mkdir(parents=True)
    h = HermesHome(home)
    h.session("p1", started=T)
    h.close()
    h.skill("lint", "Run the linters", "1. ruff check\n")
    (home / "skills" / ".usage.json").write_text("{not json")
    s = eng.importers.hermes(home)
    assert eng.sessions.get("p1").session.agent == "coder"
    assert any(".usage.json: not valid JSON" in w for w in s.warnings)
    assert read_files(home).skills[0].state == "active"


def test_home_without_state_db_and_a_patched_bundled_skill(eng, tmp_path):
    home = tmp_path / "hermes"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("Only a memory file here.")
    h = HermesHome.__new__(HermesHome)  # files only: no state.db at all
    h.root = home
    h.skill("web-search", "Bundled search, patched by the agent", "1. search\n2. cite\n")
    h.bundled(["web-search"])
    h.usage({"web-search": {"patch_count": 2, "state": "active"}})
    s = eng.importers.hermes(home)
    assert s.added == {"memories": 1, "skills": 1, "flows": 1} and s.skipped == {}
    assert not (home / "state.db").exists()
    skill = [m for m in eng.memories.list() if m.kind == "procedural"][0]
    assert skill.metadata["origin"] == "bundled"


def test_forgotten_sessions_and_memories_stay_forgotten_on_reimport(eng, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    eng.importers.hermes(h.root)
    pref = [m for m in eng.memories.list() if m.content == "Prefers short answers."][0]
    eng.forget.run("session", "s3", "user asked")
    eng.forget.run("memory", [pref.id], "user asked")
    s = eng.importers.hermes(h.root)
    assert s.added == {}
    assert s.skipped["session was forgotten here (tombstone)"] == 1
    assert s.skipped["memory entry was forgotten here (tombstone)"] == 1
    assert not direct(eng.store).all("SELECT 1 FROM sessions WHERE id = 's3'")
    assert not [m for m in eng.memories.list() if m.content == "Prefers short answers."]
