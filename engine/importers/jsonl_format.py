"""The full-fidelity JSONL format's constants: its name and version, the record type of each
table, what is never exported, and how a blob and a record are encoded (engine/importers/jsonl_io.py
has the format's description)."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

from engine.embedding import tag as model_tag
from engine.storage.dump import TableDump

if TYPE_CHECKING:
    from engine.storage.port import Connection

FORMAT = "memconsole-jsonl"
VERSION = 1
# Record type for each table (a table added later is exported under its own name).
TYPE_OF = {
    "meta": "meta",
    "sessions": "session",
    "messages": "message",
    "memories": "memory",
    "rules": "rule",
    "rule_history": "rule_history",
    "flows": "flow",
    "flow_runs": "flow_run",
    "proposals": "proposal",
    "curator_runs": "curator_run",
    "audit": "audit",
    "forget_requests": "forget_request",
    "tombstones": "tombstone",
    "import_watermarks": "import_watermark",
}
BLOB = "$b64"
# Engine bookkeeping: a live value that differs is kept, not a conflict.
KEEP_LIVE = ("meta",)
# Meta rows that name the file itself, never exported nor restored (pg_schema: the hash of a
# PostgreSQL database's own schema statements).
IDENTITY_META = ("app", "generation", "database_id", "pg_schema")
# Derived logs (like the FTS and vec0 tables): rebuilt by the engine, never exported.
DERIVED = {"vector_changes"}


def tables(dump: TableDump, conn: Connection) -> list[tuple[str, list[str], list[str]]]:
    """(table, columns, primary-key columns) for every schema table present, parents first."""
    return dump.tables(conn, [name for name, _ in dump.declared() if name not in DERIVED])


def enc(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {BLOB: base64.b64encode(bytes(v)).decode("ascii")}
    return v


def dec(v):
    if isinstance(v, dict) and set(v) == {BLOB}:
        return base64.b64decode(v[BLOB])
    return v


def only(table: str) -> tuple[str, ...]:
    """The keys of the rows of `table` left out: the file's own identity (meta
    app/generation/database_id) is no record to move: the header carries the exporting database's
    id, and the restoring database keeps its own. Nor is the model tag (the header names the
    exporting store's model; the restoring store keeps its own, engine/embedding/tag.py)."""
    return (*IDENTITY_META, *model_tag.KEYS) if table == "meta" else ()


def dumps(rec: dict) -> str:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
