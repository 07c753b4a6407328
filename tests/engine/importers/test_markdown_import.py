"""Markdown memory files: `§`-separated (Hermes) and blank-line-separated entries, bullets as
separate memories, headings ignored, USER.md as preferences/facts, re-import adds only new."""

from __future__ import annotations

import pytest

from engine import ImportFailed, InvalidInput
from engine.importers.markdown import split_entries, steps_from_body
from tests.direct_sql import direct

pytestmark = pytest.mark.backends


def test_split_on_section_sign_keeps_blank_lines_inside_an_entry():
    text = "First fact.\n\nStill the first.\n§\nSecond fact.\n§\n\n§\nThird."
    assert split_entries(text) == [(1, "First fact.\n\nStill the first."), (5, "Second fact."), (9, "Third.")]


def test_split_on_blank_lines_bullets_and_headings():
    text = (
        "# Memory\n\nThe API key rotates monthly.\nAsk ops first.\n\n"
        "- uses pnpm\n- deploys on fridays\n  only after 2pm\n\n## Other\n\nLast one.\r\n"
    )
    assert split_entries(text) == [
        (3, "The API key rotates monthly.\nAsk ops first."),
        (6, "uses pnpm"),
        (7, "deploys on fridays\nonly after 2pm"),
        (12, "Last one."),
    ]


def test_steps_prefer_numbers_then_headings_then_bullets_and_skip_code():
    assert steps_from_body("1. a\n```\n2. not a step\n```\n2) b\n- c") == ["a", "b"]
    assert steps_from_body("## One\n- x\n## Two") == ["One", "Two"]
    assert steps_from_body("- x\n* y") == ["x", "y"]


def test_import_markdown_file_and_again(eng, tmp_path):
    p = tmp_path / "MEMORY.md"
    p.write_text("Deploys use pnpm.\n§\nStaging needs the VPN.", encoding="utf-8")
    s = eng.importers.markdown(p, agent="claude")
    assert s.added == {"memories": 2} and s.vectors == 2
    mems = eng.memories.list(agent="claude")
    assert {m.content for m in mems} == {"Deploys use pnpm.", "Staging needs the VPN."}
    assert all(m.metadata["file"] == "MEMORY.md" and m.embedded for m in mems)
    line = {m.content: m.metadata["line"] for m in mems}
    assert line == {"Deploys use pnpm.": 1, "Staging needs the VPN.": 3}

    p.write_text("Deploys use pnpm.\n§\nStaging needs the VPN.\n§\nNew: CI takes 4 minutes.")
    s2 = eng.importers.markdown(p, agent="claude")
    assert s2.added == {"memories": 1} and s2.skipped == {"entry already stored for this agent": 2}
    # the same text for another agent is that agent's memory
    assert eng.importers.markdown(p, agent="other").added == {"memories": 3}


def test_user_md_entries_are_preferences_or_facts(eng, tmp_path):
    p = tmp_path / "USER.md"
    p.write_text("Prefers dark mode.\n§\nLives in Lisbon.")
    eng.importers.markdown(p, agent="a", user="ana")
    cats = {m.content: (m.category, m.user) for m in eng.memories.list()}
    assert cats == {"Prefers dark mode.": ("preference", "ana"), "Lives in Lisbon.": ("fact", "ana")}


def test_bad_files_fail_cleanly(eng, tmp_path):
    p = tmp_path / "bin.md"
    p.write_bytes(b"ok\n\n\xff\xfe broken")
    with pytest.raises(ImportFailed, match=r"bin\.md: not UTF-8 text"):
        eng.importers.markdown(p, agent="a")
    q = tmp_path / "nul.md"
    q.write_text("fine\n\nhas a \x00 NUL")
    with pytest.raises(ImportFailed, match=r"nul\.md:3: content contains a NUL"):
        eng.importers.markdown(q, agent="a")
    with pytest.raises(InvalidInput, match="agent is empty"):
        eng.importers.markdown(tmp_path / "x.md", agent="  ")
    assert direct(eng.store).one("SELECT count(*) FROM memories")[0] == 0
