"""Is this file memconsole's? Decided from its content, read without writing a byte.

A memconsole database carries `PRAGMA application_id = APP_ID` in its header (written before
anything else, so a non-empty file of ours has it from birth) and `meta` rows app / generation /
database_id. Files written before the marker existed (generation 1) are recognised by
user_version = 1 and the complete generation-1 table set; the reconcile stamps them. Anything else
is refused, whatever its name or its tables.

The peek never opens the file with Python: closing any descriptor of a database file drops every
POSIX lock this process holds on it, and a connection of ours may be live. It uses sqlean (the same
SQLite library as the engine, which defers such closes while locks are held), read-only and
immutable (no -wal/-shm created, no lock taken). Paths become URIs by percent-encoding, so `#`, `?`
and `%` in a name are never read as URI syntax.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import sqlean as sqlite3

from engine.errors import DatabaseDamaged, EngineError

APP_ID = int.from_bytes(b"MemC", "big")  # 0x4D656D43, the header's application_id
APP_NAME = "memconsole"

# The generation-1 shape, frozen (tests/fixtures/schema_gen1.db.gz): what a file written before
# the marker existed must hold. vector_changes came later within generation 1, so it may be absent.
GEN1_TABLES: dict[str, str] = {
    "meta": "key value",
    "sessions": "id agent user source model title started_at ended_at parent_session_id metadata",
    "messages": "id session_id role content tool_name at token_count metadata",
    "memories": "id content kind category tier agent user importance strength anchor_strength "
    "access_count created_at last_accessed_at last_reinforced_at archive_at pinned "
    "session_id message_id metadata absorbed_into embedded updated_at",
    "rules": "id text domain agent source score status violations last_reinforced_at "
    "last_decayed_at created_at pinned absorbed_into metadata updated_at",
    "rule_history": "id rule_id at old_score new_score old_status new_status reason actor",
    "flows": "id name domain agent triggers needs_approval steps status description created_at "
    "updated_at metadata",
    "flow_runs": "id flow_id outcome note agent at",
    "proposals": "id kind target_kind status members survivor_text evidence fingerprint run_id "
    "created_at decided_at decided_by reason applied_at undone_at result_id snapshot",
    "curator_runs": "id started_at finished_at dry_run counts report_dir watermark",
    "audit": "id at actor action target_kind target_id reason summary prev_hash hash",
    "forget_requests": "id scope_kind scope_value reason requested_by requested_at deadline status "
    "selected counts residue executed_at verified_at",
    "tombstones": "id request_id target_kind target_id content_sha256 forgotten_at",
    "import_watermarks": "source value updated_at",
    "memories_vec": "",
    "memories_fts": "",
}

NEW, OURS = "new", "ours"


def uri(path: str | os.PathLike, **params: str) -> str:
    """A file: URI for `path` that SQLite decodes back to exactly that path."""
    # The path's bytes (a name that is not UTF-8 included), every byte SQLite could read as URI
    # syntax percent-encoded.
    q = urllib.parse.quote(os.fsencode(Path(path).absolute()), safe="/")
    return f"file:{q}" + (f"?{urllib.parse.urlencode(params)}" if params else "")


@dataclass
class Peek:
    app_id: int = 0
    user_version: int = 0
    tables: dict[str, set[str]] = field(default_factory=dict)
    meta: dict[str, str] = field(default_factory=dict)

    def generation(self) -> int:
        try:
            return max(self.user_version, int(self.meta.get("generation") or 0))
        except ValueError:
            return self.user_version


def _read(conn) -> Peek:
    pk = Peek(
        conn.execute("PRAGMA application_id").fetchone()[0], conn.execute("PRAGMA user_version").fetchone()[0]
    )
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall():
        try:
            pk.tables[name] = {r[1] for r in conn.execute("SELECT * FROM pragma_table_info(?)", (name,))}
        except sqlite3.Error:  # a virtual table whose module is not loaded here
            pk.tables[name] = set()
    if "meta" in pk.tables:
        with contextlib.suppress(sqlite3.Error):  # someone else's table of that name
            pk.meta = {
                str(k): str(v)
                for k, v in conn.execute(
                    "SELECT key, value FROM meta WHERE key IN ('app', 'generation', 'database_id')"
                )
            }
    return pk


def peek(path: Path) -> Peek:
    """The main file as it is on disk (a WAL not yet checkpointed is not seen)."""
    c = sqlite3.connect(uri(path, mode="ro", immutable="1"), uri=True)
    try:
        return _read(c)
    finally:
        c.close()


_CHILD = """
import json, sys, sqlean
c = sqlean.connect(sys.argv[1], uri=True)
r = {"app_id": c.execute("PRAGMA application_id").fetchone()[0],
     "user_version": c.execute("PRAGMA user_version").fetchone()[0], "tables": {}}
q = "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
for (n,) in c.execute(q).fetchall():
    try:
        r["tables"][n] = [x[1] for x in c.execute("SELECT * FROM pragma_table_info(?)", (n,))]
    except sqlean.Error:
        r["tables"][n] = []
print(json.dumps(r))
"""


def peek_through_wal(path: Path) -> Peek | None:
    """The schema is only in a WAL: read it in a child process with a read-only -shm, so neither
    this process's locks nor the owner's -shm (a reader's mark) are touched. None if unreadable."""
    try:
        p = subprocess.run(
            [sys.executable, "-c", _CHILD, uri(path, mode="ro", readonly_shm="1")],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if p.returncode:
            return None
        r = json.loads(p.stdout)
        return Peek(r["app_id"], r["user_version"], {k: set(v) for k, v in r["tables"].items()})
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        return None


def _legacy_gen1(pk: Peek) -> bool:
    return (
        pk.app_id == 0
        and pk.user_version == 1
        and all(t in pk.tables and set(cols.split()) <= pk.tables[t] for t, cols in GEN1_TABLES.items())
    )


def _describe(pk: Peek) -> str:
    names = sorted(pk.tables)
    if not names:
        return "it holds no memconsole marker"
    return "it holds tables " + ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")


def check(path: Path, generation: int) -> str:
    """NEW (empty or absent: the caller stamps it) or OURS; anything else raises EngineError
    before a byte is written."""
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return NEW  # creating it says what is wrong, if anything
    if st.st_size == 0:
        return NEW
    try:
        pk = peek(path)
    except sqlite3.DatabaseError:
        time.sleep(0.05)  # page 1 may be mid-write by a process creating the file
        try:
            pk = peek(path)
        except sqlite3.DatabaseError as exc:
            if "malformed" in str(exc):
                raise DatabaseDamaged(
                    f"{path}: the database file is damaged ({exc}); nothing was written. "
                    "`memconsole doctor` shows SQLite's integrity check"
                ) from None
            raise EngineError(f"{path}: not a usable SQLite database ({exc}); nothing was written") from None
    wal = Path(f"{path}-wal")
    wal_has_data = wal.exists() and wal.stat().st_size > 0
    if pk.app_id != APP_ID and not pk.tables and wal_has_data:
        pk = peek_through_wal(path) or pk
        if not pk.tables and pk.app_id != APP_ID:
            raise EngineError(
                f"{path}: cannot tell whether this is a memconsole database (its "
                "content is in a WAL that could not be read); nothing was written"
            )
    if pk.app_id == APP_ID:
        if pk.generation() > generation:
            raise EngineError(
                f"{path}: written by a newer memconsole (schema generation "
                f"{pk.generation()}; this one knows {generation}); nothing was "
                "written: upgrade memconsole"
            )
        return OURS
    if _legacy_gen1(pk):
        return OURS
    if pk.app_id == 0 and pk.user_version == 0 and not pk.tables and not wal_has_data:
        return NEW  # a bare SQLite header (a creation cut short): nothing in it to protect
    raise EngineError(
        f"{path}: not a memconsole database ({_describe(pk)}); nothing was "
        "written. To bring its contents in, use `memconsole import`."
    )


def database_id(conn) -> str:
    """This file's stable identity (meta `database_id`, uuid4 hex written at creation or by the
    reconcile to older files): anchors kept outside the file are keyed by it."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'database_id'").fetchone()
    return row[0] if row else ""
