"""Applying engine/schema.py to an open file: create what is missing, add missing columns,
rebuild tables that must become AUTOINCREMENT, recreate changed indexes and triggers, stamp the
identity. One transaction; never drops data."""

from __future__ import annotations

from engine.storage.port import Reconciled
from engine.storage.sqlite import upgrade as schema_upgrade
from engine.storage.sqlite.schema import GENERATION, NAMED, TABLES, VIRTUALS, create_table

__all__ = ["Reconciled", "reconcile"]


def reconcile(conn) -> Reconciled:
    """Bring the open file up to this schema in one transaction. Never drops data."""
    out = Reconciled()
    out.from_generation = conn.execute("PRAGMA user_version").fetchone()[0]
    if out.from_generation > GENERATION:  # reconciling would "downgrade" a newer file: refuse
        from engine.errors import EngineError

        raise EngineError(
            f"this database was written by a newer memconsole (schema generation "
            f"{out.from_generation}; this one knows {GENERATION}): upgrade memconsole"
        )
    existing = {
        (r[0], r[1]): r[2]
        for r in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
    }
    names = {name for (_, name) in existing}
    if (
        out.from_generation == GENERATION
        and _complete(conn, names, existing)
        and schema_upgrade.stamped(conn, GENERATION)
    ):
        return out
    # Rebuilding a parent table must not cascade-delete its children: foreign keys are off for
    # the reconcile (the pragma is a no-op inside a transaction, so it goes first).
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have reconciled while we waited for the lock: look again.
        existing = {
            (r[0], r[1]): r[2]
            for r in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        }
        names = {name for (_, name) in existing}
        for t in TABLES:
            if t.name not in names:
                conn.execute(create_table(t))
                out.created.append(t.name)
                continue
            have = {r[1] for r in conn.execute(f"PRAGMA table_info({t.name})")}
            for col, decl in t.columns:
                if col not in have:
                    conn.execute(f"ALTER TABLE {t.name} ADD COLUMN {col} {_addable(decl)}")
                    out.added_columns.append(f"{t.name}.{col}")
            sql = existing.get(("table", t.name))
            if schema_upgrade.wants_autoincrement(t) and schema_upgrade.lacks_autoincrement(sql):
                schema_upgrade.rebuild_autoincrement(conn, t, names)
                out.rebuilt.append(t.name)
        if out.rebuilt:  # their indexes and triggers went with the old tables
            existing = {
                (r[0], r[1]): r[2]
                for r in conn.execute(
                    "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
                )
            }
        for v in VIRTUALS:
            if v.name not in names:
                conn.execute(v.sql)
                if v.rebuild:
                    conn.execute(v.rebuild)
                out.created.append(v.name)
        for n in NAMED:
            sql = existing.get((n.kind, n.name))
            if sql is None:
                conn.execute(n.sql)
                out.created.append(n.name)
            elif _norm(sql) != _norm(n.sql):
                conn.execute(f"DROP {n.kind.upper()} {n.name}")
                conn.execute(n.sql)
                out.recreated.append(n.name)
        schema_upgrade.stamp(conn, GENERATION)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.execute("PRAGMA foreign_keys = ON")
    return out


def _complete(conn, names: set[str], existing: dict) -> bool:
    wanted = {t.name for t in TABLES} | {v.name for v in VIRTUALS} | {n.name for n in NAMED}
    if not wanted <= names:
        return False
    for t in TABLES:
        if schema_upgrade.wants_autoincrement(t) and schema_upgrade.lacks_autoincrement(
            existing.get(("table", t.name))
        ):
            return False
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({t.name})")}
        if any(c not in have for c, _ in t.columns):
            return False
    return True


def _addable(decl: str) -> str:
    """ALTER TABLE ADD COLUMN refuses PRIMARY KEY/UNIQUE, a NOT NULL column without a default, and
    a REFERENCES column with a non-NULL default: keep type, default and references, and give old
    rows a neutral value where the declaration has none."""
    d = decl.replace("PRIMARY KEY", "").replace("AUTOINCREMENT", "").replace("UNIQUE", "").strip()
    if "NOT NULL" in d and "DEFAULT" not in d:
        if "REFERENCES" in d:
            d = d.replace("NOT NULL", "").strip()
        else:
            d = d.replace("NOT NULL", "NOT NULL DEFAULT " + ("''" if d.startswith("TEXT") else "0"))
    return " ".join(d.split())


def _norm(sql: str) -> str:
    return " ".join(sql.split())
