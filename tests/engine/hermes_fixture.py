"""Build Hermes agent homes inside a test: state.db at schema v2 or a later one (extra columns,
system_prompts, columns this importer has never heard of), memories, skills, curator reports.

`HermesHome.conn` stays open with wal_autocheckpoint=0 like a running agent, so rows written
after `hold_wal()` live only in state.db-wal until the test closes it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import sqlean as sqlite3

V2 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id));
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END;
"""

LATER = """
ALTER TABLE sessions ADD COLUMN title TEXT;
ALTER TABLE sessions ADD COLUMN cwd TEXT;
ALTER TABLE sessions ADD COLUMN git_branch TEXT;
ALTER TABLE sessions ADD COLUMN estimated_cost_usd REAL;
ALTER TABLE sessions ADD COLUMN archived INTEGER DEFAULT 0;
ALTER TABLE sessions ADD COLUMN pinned INTEGER DEFAULT 0;
ALTER TABLE sessions ADD COLUMN last_activity_at REAL;
ALTER TABLE sessions ADD COLUMN system_prompt_hash TEXT;
ALTER TABLE sessions ADD COLUMN billing_mode TEXT;
ALTER TABLE messages ADD COLUMN active INTEGER DEFAULT 1;
ALTER TABLE messages ADD COLUMN display_kind TEXT;
ALTER TABLE messages ADD COLUMN reasoning TEXT;
ALTER TABLE messages ADD COLUMN codex_items TEXT;
CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, content=messages,
    content_rowid=id, tokenize='trigram');
"""


class HermesHome:
    def __init__(self, root: Path, *, version: int = 2) -> None:
        self.root = root
        self.version = version
        root.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(root / "state.db"), isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(V2 + (LATER if version > 2 else ""))
        self.conn.execute("INSERT INTO schema_version VALUES (?)", (version,))

    # -- state.db ---------------------------------------------------------------------------------
    def hold_wal(self) -> None:
        """From now on nothing is checkpointed: new rows stay in state.db-wal."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.execute("PRAGMA wal_autocheckpoint=0")

    def session(
        self,
        sid: str,
        *,
        started: float,
        source: str = "cli",
        user: str = "u1",
        parent: str | None = None,
        ended: float | None = None,
        end_reason: str | None = None,
        **later,
    ) -> None:
        cols = {
            "id": sid,
            "source": source,
            "user_id": user,
            "model": "hermes-4",
            "model_config": json.dumps({"temperature": 0.3}),
            "system_prompt": "You are Hermes.",
            "parent_session_id": parent,
            "started_at": started,
            "ended_at": ended,
            "end_reason": end_reason,
            **later,
        }
        self.conn.execute(
            f"INSERT INTO sessions({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            list(cols.values()),
        )

    def end(self, sid: str, at: float, reason: str) -> None:
        self.conn.execute("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?", (at, reason, sid))

    def message(self, sid: str, role: str, content: str, at: float, **later) -> int:
        cols = {"session_id": sid, "role": role, "content": content, "timestamp": at, **later}
        cur = self.conn.execute(
            f"INSERT INTO messages({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            list(cols.values()),
        )
        return int(cur.lastrowid)

    def prompt(self, text: str) -> str:
        h = hashlib.sha256(text.encode()).hexdigest()[:16]
        self.conn.execute("INSERT OR IGNORE INTO system_prompts VALUES (?, ?)", (h, text))
        return h

    def close(self) -> None:
        self.conn.close()

    # -- files ------------------------------------------------------------------------------------
    def memories(self, memory: list[str], user: list[str] | None = None) -> None:
        d = self.root / "memories"
        d.mkdir(exist_ok=True)
        (d / "MEMORY.md").write_text("\n§\n".join(memory), encoding="utf-8")
        if user is not None:
            (d / "USER.md").write_text("\n§\n".join(user), encoding="utf-8")
        (d / "MEMORY.md.lock").write_text("")
        (d / "MEMORY.md.bak.20260101120000").write_text("an old backup\n§\nnot to import")

    def skill(
        self,
        name: str,
        description: str,
        body: str,
        *,
        category: str | None = None,
        archived_stamp: str | None = None,
    ) -> Path:
        base = self.root / "skills"
        if archived_stamp:
            d = base / ".archive" / f"{name}-{archived_stamp}"
        else:
            d = base / category / name if category else base / name
        d.mkdir(parents=True, exist_ok=True)
        p = d / "SKILL.md"
        p.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8")
        return p

    def usage(self, data: dict) -> None:
        (self.root / "skills").mkdir(exist_ok=True)
        (self.root / "skills" / ".usage.json").write_text(json.dumps(data), encoding="utf-8")

    def bundled(self, names: list[str]) -> None:
        (self.root / "skills" / ".bundled_manifest").write_text(
            "".join(f"{n}:abc123\n" for n in names), encoding="utf-8"
        )

    def curator_run(self, folder: str, data: dict) -> None:
        d = self.root / "logs" / "curator" / folder
        d.mkdir(parents=True, exist_ok=True)
        (d / "run.json").write_text(json.dumps(data), encoding="utf-8")
        (d / "REPORT.md").write_text("# Curator report\n", encoding="utf-8")


def file_digests(root: Path) -> dict[str, str]:
    """sha256 of every file under root (state.db, -wal, -shm and all the rest)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
