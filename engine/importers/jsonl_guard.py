"""What a JSONL restore must not bring back: forgotten records, their children, and (restoring into
the very database the export came from) rows that database has deleted since.

A record is forgotten when a tombstone matches its identity or content (engine/tombstones.py):
that holds for an export written before the forget, restored into any database that holds the
tombstones. Restoring into the same database (same `database_id`) is a re-import of an older
snapshot: ids are never reused, so an id the database has already handed out but no longer holds
was deleted here (forgotten, merged away, cascaded) and is not re-created; a live row that differs
from its older exported copy (redacted, edited since) is kept as it is."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from engine.forget.tombstones import flow_text
from engine.importers.common import forgotten
from engine.storage.dump import TableDump

if TYPE_CHECKING:
    from engine.storage.port import Connection

# Integer-keyed tables whose deleted rows a same-database restore must not re-create.
NEVER_RECREATE = (
    "memories",
    "messages",
    "rules",
    "rule_history",
    "flows",
    "flow_runs",
    "proposals",
    "curator_runs",
    "audit",
    "forget_requests",
    "tombstones",
)
# child table -> (its column naming the parent, parent table)
CHILDREN = {
    "messages": ("session_id", "sessions"),
    "rule_history": ("rule_id", "rules"),
    "flow_runs": ("flow_id", "flows"),
}


def database_id(conn: Connection) -> str | None:
    return conn.imports_queries.database_id()


def export_database_id(header: dict, records) -> str | None:
    """The exporting database's id: in the header (newer exports) or its meta row."""
    if isinstance(header.get("database_id"), str):
        return header["database_id"]
    for _, table, row, _ in records:
        if table == "meta" and row.get("key") == "database_id" and isinstance(row.get("value"), str):
            return row["value"]
    return None


class Guard:
    """Decides, row by row inside the restore's transaction, what is not restored and why."""

    def __init__(self, conn: Connection, same_db: bool, dump: TableDump) -> None:
        self.conn = conn
        self.same_db = same_db
        self.dump = dump
        self.skipped: dict[str, set] = {}  # table -> keys of rows not restored
        self.fresh: set[str] = set()  # sessions this restore added (new here)
        self._high: dict[str, int] = {}

    def _high_water(self, table: str) -> int:
        """The largest id this database ever handed out in `table`."""
        if table not in self._high:
            self._high[table] = self.dump.high_water(self.conn, table)
        return self._high[table]

    def clean(self, table: str, row: dict) -> dict:
        """A kept row's link to a forgotten session goes, as the forget unlinked it here."""
        sid = row.get("session_id") if table == "memories" else None
        if (
            isinstance(sid, str)
            and sid
            and (sid in self.skipped.get("sessions", ()) or forgotten(self.conn, "session", ident=sid))
        ):
            return {**row, "session_id": None}
        return row

    def reason(self, table: str, row: dict) -> str | None:
        """Why this exported row must not be restored (None: restore it)."""
        child = CHILDREN.get(table)
        if child and row.get(child[0]) in self.skipped.get(child[1], ()):
            return f"its {child[1][:-1]} was not restored"
        why = self._forgotten(table, row)
        if (
            why is None
            and self.same_db
            and table in NEVER_RECREATE
            and isinstance(row.get("id"), int)
            and not self.dump.has_id(self.conn, table, row["id"])
            and row["id"] <= self._high_water(table)
        ):
            why = "deleted from this database since the export"
        if why is not None:
            key = row.get("id")
            if key is not None:
                self.skipped.setdefault(table, set()).add(key)
        return why

    def _forgotten(self, table: str, row: dict) -> str | None:
        c = self.conn
        hit = False
        if table == "memories":
            skill = _json(row.get("metadata")).get("hermes_skill")
            hit = forgotten(
                c,
                "memory",
                ident=f"hermes_skill:{skill}" if isinstance(skill, str) and skill else None,
                texts=(row.get("content"),),
            )
        elif table == "sessions":
            hit = forgotten(c, "session", ident=row.get("id"))
        elif table == "messages":
            # Content only in a session this database held before: a conversation new here is
            # not muted by the common words of a forgotten one (see hermes_sessions.import_messages).
            hit = forgotten(c, "session", ident=row.get("session_id")) or (
                row.get("session_id") not in self.fresh
                and forgotten(c, "message", texts=(row.get("content"),))
            )
        elif table == "rules":
            hit = forgotten(c, "rule", texts=(row.get("text"),))
        elif table == "flows":
            steps = _json(row.get("steps"), [])
            hit = forgotten(
                c,
                "flow",
                ident=row.get("name"),
                texts=(flow_text(row.get("description") or "", steps if isinstance(steps, list) else []),),
            )
        return "forgotten here (tombstone)" if hit else None


def _json(text, default=None):
    """A JSON column already validated (validate.check_row); {} / default when absent."""
    try:
        v = json.loads(text) if isinstance(text, str) and text else None
    except ValueError:
        v = None
    if default is None:
        return v if isinstance(v, dict) else {}
    return v if v is not None else default
