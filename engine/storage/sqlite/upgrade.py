"""Upgrades the reconcile cannot do with ALTER: a table whose integer id must never be reused
(AUTOINCREMENT), and the identity stamp (application_id, meta app / generation / database_id).

SQLite cannot ALTER a table to AUTOINCREMENT, so the table is rebuilt inside the reconcile's one
transaction: a copy with the new declaration, every row and id carried over, the old one dropped,
the copy renamed. External-content FTS5 indexes and vec0 rows are keyed by that same id, so they
stay valid; indexes and triggers (dropped with the old table) are recreated by the reconcile.
"""

from __future__ import annotations

import re
import uuid

from engine.storage.sqlite.identity import APP_ID, APP_NAME
from engine.storage.sqlite.schema import create_table

# The audit log names ids of rows that may be gone already (deleted before this upgrade): the
# sequence starts past those too, so not even a pre-upgrade deletion is reused.
AUDIT_KIND = {
    "memories": "memory",
    "rules": "rule",
    "flows": "flow",
    "proposals": "proposal",
    "forget_requests": "forget_request",
    "curator_runs": "curator_run",
}

_ID_PK = re.compile(r"\bid\s+INTEGER\s+PRIMARY\s+KEY\b(?!\s+AUTOINCREMENT)", re.IGNORECASE)


def wants_autoincrement(table) -> bool:
    return any(n == "id" and "AUTOINCREMENT" in d.upper() for n, d in table.columns)


def lacks_autoincrement(sql: str | None) -> bool:
    return sql is not None and "AUTOINCREMENT" not in sql.upper()


def _rebuilt_sql(table, sql: str, tmp: str, have: list[tuple[str, str]]) -> str:
    head = re.match(
        r"\s*CREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?(\"?)" + table.name + r"\2\s*\(", sql, re.IGNORECASE
    )
    if head and _ID_PK.search(sql):
        return f"CREATE TABLE {tmp} (" + _ID_PK.sub(
            "id INTEGER PRIMARY KEY AUTOINCREMENT", sql[head.end() :], count=1
        )
    # An unusual declaration: ours, plus any column only this file has (never drop data).
    declared = {n for n, _ in table.columns}
    extra = [f'"{n}" {t}' for n, t in have if n not in declared]
    create = create_table(table).replace(f"IF NOT EXISTS {table.name}", tmp, 1)
    return create[:-1] + "".join(f",\n  {e}" for e in extra) + ")" if extra else create


def rebuild_autoincrement(conn, table, names: set[str]) -> None:
    """Rebuild `table` with an AUTOINCREMENT id, keeping every row, id and column. Runs inside
    the caller's transaction with foreign keys off (dropping a parent must not cascade)."""
    tmp = f"_mc_rebuild_{table.name}"
    sql = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table.name,)
    ).fetchone()[0]  # as it is now, added columns included
    have = [(r[1], r[2]) for r in conn.execute(f"PRAGMA table_info({table.name})")]
    cols = ", ".join(f'"{n}"' for n, _ in have)
    conn.execute(f"DROP TABLE IF EXISTS {tmp}")
    conn.execute(_rebuilt_sql(table, sql, tmp, have))
    conn.execute(f"INSERT INTO {tmp} ({cols}) SELECT {cols} FROM {table.name}")
    conn.execute(f"DROP TABLE {table.name}")
    # legacy mode: the rename rewrites neither triggers nor other tables' REFERENCES (they name
    # the final table already, and must keep doing so).
    conn.execute("PRAGMA legacy_alter_table = ON")
    try:
        conn.execute(f"ALTER TABLE {tmp} RENAME TO {table.name}")
    finally:
        conn.execute("PRAGMA legacy_alter_table = OFF")
    seed = conn.execute(f"SELECT coalesce(max(id), 0) FROM {table.name}").fetchone()[0]
    kind = AUDIT_KIND.get(table.name)
    if kind and "audit" in names:
        seen = conn.execute(
            "SELECT max(CAST(target_id AS INTEGER)) FROM audit WHERE target_kind = ? AND "
            "target_id != '' AND target_id NOT GLOB '*[^0-9]*'",
            (kind,),
        ).fetchone()[0]
        seed = max(seed, seen or 0)
    if table.name == "memories" and "vector_changes" in names:
        seen = conn.execute("SELECT max(memory_id) FROM vector_changes").fetchone()[0]
        seed = max(seed, seen or 0)
    conn.execute("DELETE FROM sqlite_sequence WHERE name IN (?, ?)", (table.name, tmp))
    conn.execute("INSERT INTO sqlite_sequence(name, seq) VALUES (?, ?)", (table.name, seed))


def stamped(conn, generation: int) -> bool:
    """Does the file already carry the full identity stamp of this generation?"""
    if conn.execute("PRAGMA application_id").fetchone()[0] != APP_ID:
        return False
    try:
        meta = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('app', 'generation', 'database_id')"
            ).fetchall()
        )
    except Exception:  # noqa: BLE001 - no meta table yet
        return False
    return (
        meta.get("app") == APP_NAME
        and meta.get("generation") == str(generation)
        and bool(meta.get("database_id"))
    )


def stamp(conn, generation: int) -> None:
    """Mark the file as ours (inside the reconcile's transaction); database_id is kept once set."""
    conn.execute(f"PRAGMA application_id = {APP_ID}")
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('app', ?) ON CONFLICT(key) DO UPDATE "
        "SET value = excluded.value",
        (APP_NAME,),
    )
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('generation', ?) ON CONFLICT(key) DO "
        "UPDATE SET value = excluded.value",
        (str(generation),),
    )
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('database_id', ?) ON CONFLICT(key) DO NOTHING",
        (uuid.uuid4().hex,),
    )
    conn.execute(f"PRAGMA user_version = {generation}")
