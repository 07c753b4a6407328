"""The PostgreSQL schema's triggers and the functions they run (schema.py puts the statements
together): the keyword index's queue, the vector table's filter fields, the change feed, a
reembed's staging, and the audit chain's position."""

from __future__ import annotations

# What each keyword source indexes (table, its text columns), in FTS5's column order.
KEYWORD_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "memories": ("memories", ("content",)),
    "messages": ("messages", ("content",)),
    "rules": ("rules", ("text",)),
    "flows": ("flows", ("name", "description", "triggers", "steps")),
}


# An engine write (store.py sets it with SET LOCAL) queues its feed entries; any other statement
# (a tool, a direct UPDATE) logs at once.
DEFERRED_FEED = "memconsole.deferred_feed"


def _feed(memory_id: str, text_changed: int | None = None) -> str:
    cols, vals = "memory_id", memory_id
    if text_changed is not None:
        cols, vals = f"{cols}, text_changed", f"{vals}, {text_changed}"
    return (
        f"IF current_setting('{DEFERRED_FEED}', true) = 'on' THEN"
        f" INSERT INTO vector_changes_pending({cols}) VALUES ({vals});"
        f" ELSE INSERT INTO vector_changes({cols}) VALUES ({vals}); END IF;"
    )


# The audit chain's position (audit.py, engine/audit/verify.py): `seq`, assigned inside the writing
# transaction by a trigger (every insert path: appends, restores, bulk copies), so the id gap a
# rolled-back insert leaves (a sequence value is taken at insert, not at commit) is no chain gap.
# Older databases get the column and their rows numbered in id order (the chain's order).
# Partitions (issue #24): the log is N chains (`part`), each with its own head row in
# `audit_heads`, which an append locks (FOR UPDATE) until its transaction ends: appends of one
# partition are ordered, so max + 1 within the partition is the next position; the unique index
# refuses two rows at one. Rows from before partitions are partition 0. Heads rows 0-7 are made
# here; more (postgres.audit_partitions) on first use.
AUDIT_POSITION = (
    "ALTER TABLE audit ADD COLUMN IF NOT EXISTS seq bigint",
    "ALTER TABLE audit ADD COLUMN IF NOT EXISTS part bigint NOT NULL DEFAULT 0",
    "UPDATE audit a SET seq = b.base + b.n FROM (SELECT id, row_number() OVER (ORDER BY id) AS n,"
    " (SELECT coalesce(max(seq), 0) FROM audit) AS base FROM audit WHERE seq IS NULL) b WHERE a.id = b.id",
    "DROP INDEX IF EXISTS audit_seq",
    "CREATE UNIQUE INDEX IF NOT EXISTS audit_part_seq ON audit(part, seq)",
    "CREATE OR REPLACE FUNCTION audit_position_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    " IF new.seq IS NULL THEN"
    " new.seq := coalesce((SELECT max(seq) FROM audit WHERE part = new.part), 0) + 1; END IF;"
    " RETURN new; END $$",
    "DROP TRIGGER IF EXISTS audit_position ON audit",
    "CREATE TRIGGER audit_position BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION audit_position_fn()",
    "CREATE TABLE IF NOT EXISTS audit_heads (part integer PRIMARY KEY)",
    "INSERT INTO audit_heads(part) SELECT generate_series(0, 7) ON CONFLICT DO NOTHING",
)


def _trigger(name: str, table: str, when: str, body: str) -> list[str]:
    return [
        f"CREATE OR REPLACE FUNCTION {name}_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body}"
        " RETURN NULL; END $$",
        f"DROP TRIGGER IF EXISTS {name} ON {table}",
        f"CREATE TRIGGER {name} {when} ON {table} FOR EACH ROW EXECUTE FUNCTION {name}_fn()",
    ]


def trigger_statements() -> list[str]:
    out: list[str] = []
    for src, (table, cols) in KEYWORD_SOURCES.items():
        out += _trigger(
            f"{src}_fts_aiu",
            table,
            f"AFTER UPDATE OF {', '.join(cols)} OR INSERT",
            f"INSERT INTO fts_pending(src, doc_id) VALUES ('{src}', new.id);",
        )
        out += _trigger(
            f"{src}_fts_ad",
            table,
            "AFTER DELETE",
            f"DELETE FROM fts_terms WHERE src = '{src}' AND doc_id = old.id;"
            f" DELETE FROM fts_docs WHERE src = '{src}' AND doc_id = old.id;",
        )
    out += _trigger(
        "memory_vectors_meta",
        "memories",
        'AFTER UPDATE OF tier, kind, category, agent, "user"',
        "IF new.embedded = 1 THEN UPDATE memory_vectors SET tier = new.tier, kind = new.kind,"
        ' category = new.category, agent = new.agent, "user" = new."user" WHERE memory_id = new.id;'
        " END IF;",
    )
    out += _trigger(
        "memories_vlog_au",
        "memories",
        'AFTER UPDATE OF embedded, tier, kind, category, agent, "user"',
        _feed("new.id"),
    )
    out += _trigger(
        "memories_vlog_ad",
        "memories",
        "AFTER DELETE",
        _feed("old.id", 1),
    )
    out += _trigger(
        "memories_vlog_text",
        "memories",
        "AFTER UPDATE OF content OR INSERT",
        _feed("new.id", 1),
    )
    out += _trigger(
        "vector_staging_text",
        "memories",
        "AFTER UPDATE OF content",
        "DELETE FROM vector_staging WHERE memory_id = new.id;",
    )
    return out


TRIGGER_NAMES = (
    *(f"{src}_fts_{op}" for src in KEYWORD_SOURCES for op in ("aiu", "ad")),
    "memory_vectors_meta",
    "memories_vlog_au",
    "memories_vlog_ad",
    "memories_vlog_text",
    "audit_position",
    "vector_staging_text",
)
