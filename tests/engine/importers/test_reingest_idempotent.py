"""Issue 22 (Trust), inputs: re-ingesting the same JSONL is idempotent on both backends — its
sessions, messages and memories are not added twice, with or without times on the messages — while
a message said again (another "ok") still lands, and a grown file adds only what is new."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.direct_sql import direct

pytestmark = pytest.mark.backends


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n")
    return path


RECORDS = [
    {"type": "session", "id": "s-re", "agent": "ops", "title": "deploy chat"},
    {
        "type": "message",
        "session_id": "s-re",
        "role": "user",
        "content": "deploy at noon?",
        "at": 1_700_000_000,
    },
    {"type": "message", "session_id": "s-re", "role": "assistant", "content": "ok", "at": 1_700_000_010},
    {"type": "message", "session_id": "s-re", "role": "user", "content": "ok"},  # no time
    {"type": "message", "session_id": "s-re", "role": "user", "content": "ok"},  # said twice
    {"type": "message", "session_id": "s-re", "role": "tool", "content": "done", "tool_name": "deploy"},
    {"type": "memory", "content": "deploys happen at noon on weekdays", "agent": "ops"},
]


def _counts(eng) -> tuple[int, int, int]:
    return tuple(
        direct(eng.store).one(f"SELECT count(*) FROM {t}")[0] for t in ("sessions", "messages", "memories")
    )


def test_the_same_jsonl_twice_adds_nothing_the_second_time(eng, tmp_path):
    f = _write(tmp_path / "in.jsonl", RECORDS)
    first = eng.importers.ingest(f)
    assert first["added"] == {"sessions": 1, "messages": 5, "memories": 1}
    after = _counts(eng)
    second = eng.importers.ingest(f)
    assert second["added"] == {"sessions": 0, "messages": 0, "memories": 0}, second
    assert second["skipped_existing_messages"] == 5 and _counts(eng) == after
    contents = [m.content for m in eng.sessions.get("s-re").messages]
    assert sorted(contents) == sorted(r["content"] for r in RECORDS if r["type"] == "message")


def test_a_grown_file_adds_only_the_new_lines_and_a_repeat_still_lands(eng, tmp_path):
    eng.importers.ingest(_write(tmp_path / "a.jsonl", RECORDS))
    more = [
        *RECORDS,
        {"type": "message", "session_id": "s-re", "role": "user", "content": "ok"},  # a third "ok"
        {"type": "message", "session_id": "s-re", "role": "user", "content": "thanks", "at": 1_700_000_100},
    ]
    r = eng.importers.ingest(_write(tmp_path / "b.jsonl", more))
    assert r["added"]["messages"] == 2 and r["skipped_existing_messages"] == 5
    assert [m.content for m in eng.sessions.get("s-re").messages].count("ok") == 4
