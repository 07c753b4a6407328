"""SQLite's schema: the shared tables and indexes (engine/storage/tables.py) in SQLite's DDL, plus
what only SQLite has (the FTS5 and vec0 tables and the triggers that keep them equal to their
tables); opening a file reconciles it to this (reconcile.py).

Reconciling creates what is missing and adds missing columns; it never drops data. Triggers and
indexes hold no data, so a changed definition is simply recreated; a table that must become
AUTOINCREMENT (ids never reused) is rebuilt with every row (upgrade.py).
`PRAGMA user_version` and the `meta` row `generation` record the generation; `application_id` and
`meta` app / database_id mark the file as ours (identity.py refuses any other file).
Bump GENERATION (tables.py) whenever this file changes shape, and keep a fixture for each
generation under tests/fixtures/ (issue: schema evolution).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.storage.tables import EMBED_DIM, GENERATION, INDEXES, TABLES, Index, Table

__all__ = [
    "EMBED_DIM",
    "GENERATION",
    "NAMED",
    "TABLES",
    "VIRTUALS",
    "Named",
    "Table",
    "Virtual",
    "create_index",
    "create_table",
    "reconcile",
]


def create_table(t: Table) -> str:
    parts = [f"{n} {d}" for n, d in t.columns] + list(t.constraints)
    return f"CREATE TABLE IF NOT EXISTS {t.name} (\n  " + ",\n  ".join(parts) + "\n)"


def create_index(i: Index) -> str:
    return f"CREATE INDEX {i.name} ON {i.table}({i.columns})" + (f" WHERE {i.where}" if i.where else "")


@dataclass(frozen=True)
class Virtual:
    """An FTS5 or vec0 table. `rebuild` says how to refill it from its source when it is new."""

    name: str
    sql: str
    rebuild: str = ""


@dataclass(frozen=True)
class Named:
    """An index or trigger: no data of its own, recreated when its definition changes."""

    kind: str  # "index" | "trigger"
    name: str
    sql: str


def _fts_sync(table: str, fts: str, cols: str) -> list[Named]:
    """Triggers that keep an external-content FTS5 index equal to its table."""
    new_vals = ", ".join(f"new.{c}" for c in cols.split(", "))
    old_vals = ", ".join(f"old.{c}" for c in cols.split(", "))
    return [
        Named(
            "trigger",
            f"{fts}_ai",
            f"CREATE TRIGGER {fts}_ai AFTER INSERT ON {table} BEGIN "
            f"INSERT INTO {fts}(rowid, {cols}) VALUES (new.id, {new_vals}); END",
        ),
        Named(
            "trigger",
            f"{fts}_ad",
            f"CREATE TRIGGER {fts}_ad AFTER DELETE ON {table} BEGIN "
            f"INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.id, {old_vals}); END",
        ),
        Named(
            "trigger",
            f"{fts}_au",
            f"CREATE TRIGGER {fts}_au AFTER UPDATE OF {cols} ON {table} BEGIN "
            f"INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.id, {old_vals}); "
            f"INSERT INTO {fts}(rowid, {cols}) VALUES (new.id, {new_vals}); END",
        ),
    ]


TOKENIZE_WORDS = "porter unicode61 remove_diacritics 2"


def vec_table(dim: int) -> str:
    """The vector table at a model's width (EMBED_DIM: the default model's, for a new file; a
    reembed recreates it at its model's, engine/embedding/reembed.py)."""
    return (
        f"CREATE VIRTUAL TABLE memories_vec USING vec0(memory_id INTEGER PRIMARY KEY, "
        f"embedding float[{int(dim)}] distance_metric=cosine, tier TEXT, kind TEXT, "
        f"category TEXT, agent TEXT, user TEXT)"
    )


VIRTUALS: tuple[Virtual, ...] = (
    Virtual(
        "messages_fts",
        f"CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', "
        f"content_rowid='id', tokenize='{TOKENIZE_WORDS}')",
        "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
    ),
    Virtual(
        "messages_tri",
        "CREATE VIRTUAL TABLE messages_tri USING fts5(content, content='messages', "
        "content_rowid='id', tokenize='trigram')",
        "INSERT INTO messages_tri(messages_tri) VALUES ('rebuild')",
    ),
    Virtual(
        "memories_fts",
        f"CREATE VIRTUAL TABLE memories_fts USING fts5(content, content='memories', "
        f"content_rowid='id', tokenize='{TOKENIZE_WORDS}')",
        "INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')",
    ),
    Virtual(
        "memories_tri",
        "CREATE VIRTUAL TABLE memories_tri USING fts5(content, content='memories', "
        "content_rowid='id', tokenize='trigram')",
        "INSERT INTO memories_tri(memories_tri) VALUES ('rebuild')",
    ),
    Virtual(
        "rules_fts",
        f"CREATE VIRTUAL TABLE rules_fts USING fts5(text, content='rules', "
        f"content_rowid='id', tokenize='{TOKENIZE_WORDS}')",
        "INSERT INTO rules_fts(rules_fts) VALUES ('rebuild')",
    ),
    Virtual(
        "flows_fts",
        f"CREATE VIRTUAL TABLE flows_fts USING fts5(name, description, triggers, steps, "
        f"content='flows', content_rowid='id', tokenize='{TOKENIZE_WORDS}')",
        "INSERT INTO flows_fts(flows_fts) VALUES ('rebuild')",
    ),
    # Every field search filters on is a metadata column, so a filtered KNN still returns k rows.
    Virtual("memories_vec", vec_table(EMBED_DIM), "UPDATE memories SET embedded = 0"),
    # A reembed's new vectors (engine/embedding/reembed.py) until the switch moves them into
    # memories_vec; a plain table (any width). Listed here: created when missing, never recreated.
    Virtual(
        "vector_staging",
        "CREATE TABLE vector_staging (memory_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)",
    ),
)

NAMED: tuple[Named, ...] = (
    *(Named("index", i.name, create_index(i)) for i in INDEXES),
    *_fts_sync("messages", "messages_fts", "content"),
    *_fts_sync("messages", "messages_tri", "content"),
    *_fts_sync("memories", "memories_fts", "content"),
    *_fts_sync("memories", "memories_tri", "content"),
    *_fts_sync("rules", "rules_fts", "text"),
    *_fts_sync("flows", "flows_fts", "name, description, triggers, steps"),
    # vec0 metadata follows the memory row, so filtered KNN never sees stale tiers.
    Named(
        "trigger",
        "memories_vec_meta",
        "CREATE TRIGGER memories_vec_meta AFTER UPDATE OF "
        "tier, kind, category, agent, user ON memories WHEN new.embedded = 1 BEGIN "
        "UPDATE memories_vec SET tier = new.tier, kind = new.kind, category = new.category, "
        "agent = new.agent, user = new.user WHERE memory_id = new.id; END",
    ),
    Named(
        "trigger",
        "memories_vec_ad",
        "CREATE TRIGGER memories_vec_ad AFTER DELETE ON memories "
        "BEGIN DELETE FROM memories_vec WHERE memory_id = old.id; END",
    ),
    Named(
        "trigger",
        "memories_vlog_au",
        "CREATE TRIGGER memories_vlog_au AFTER UPDATE OF "
        "embedded, tier, kind, category, agent, user ON memories BEGIN "
        "INSERT INTO vector_changes(memory_id) VALUES (new.id); END",
    ),
    Named(
        "trigger",
        "memories_vlog_ad",
        "CREATE TRIGGER memories_vlog_ad AFTER DELETE ON memories "
        "BEGIN INSERT INTO vector_changes(memory_id, text_changed) VALUES (old.id, 1); END",
    ),
    Named(
        "trigger",
        "memories_vlog_ai",
        "CREATE TRIGGER memories_vlog_ai AFTER INSERT ON memories "
        "BEGIN INSERT INTO vector_changes(memory_id, text_changed) VALUES (new.id, 1); END",
    ),
    Named(
        "trigger",
        "memories_vlog_text",
        "CREATE TRIGGER memories_vlog_text AFTER UPDATE OF content ON memories "
        "BEGIN INSERT INTO vector_changes(memory_id, text_changed) VALUES (new.id, 1); END",
    ),
    # Keep the last ~200k changes; a matrix further behind than that reloads in full.
    Named(
        "trigger",
        "vector_changes_prune",
        "CREATE TRIGGER vector_changes_prune AFTER INSERT ON "
        "vector_changes WHEN new.seq % 4096 = 0 BEGIN "
        "DELETE FROM vector_changes WHERE seq <= new.seq - 200000; END",
    ),
    # A memory deleted or edited during a reembed loses its staged vector (re-embedded later).
    Named(
        "trigger",
        "vector_staging_ad",
        "CREATE TRIGGER vector_staging_ad AFTER DELETE ON memories "
        "BEGIN DELETE FROM vector_staging WHERE memory_id = old.id; END",
    ),
    Named(
        "trigger",
        "vector_staging_text",
        "CREATE TRIGGER vector_staging_text AFTER UPDATE OF content ON memories "
        "BEGIN DELETE FROM vector_staging WHERE memory_id = new.id; END",
    ),
)


def reconcile(conn):
    """Bring the open file up to this schema in one transaction (engine/schema_reconcile.py)."""
    from engine.storage.sqlite.reconcile import reconcile as run

    return run(conn)
