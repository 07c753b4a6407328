"""One declarative description of the database; opening a file reconciles it to this.

Reconciling creates what is missing and adds missing columns; it never drops data. Triggers and
indexes hold no data, so a changed definition is simply recreated; a table that must become
AUTOINCREMENT (ids never reused) is rebuilt with every row (engine/schema_upgrade.py).
`PRAGMA user_version` and the `meta` row `generation` record the generation; `application_id` and
`meta` app / database_id mark the file as ours (engine/identity.py refuses any other file).
Bump GENERATION whenever this file changes shape, and keep a fixture for each generation under
tests/fixtures/ (issue: schema evolution).
"""

from __future__ import annotations

from dataclasses import dataclass

GENERATION = 2  # 2: AUTOINCREMENT ids, the identity stamp (application_id, meta)
EMBED_DIM = 384


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[tuple[str, str], ...]  # (name, declaration)
    constraints: tuple[str, ...] = ()

    def create_sql(self) -> str:
        parts = [f"{n} {d}" for n, d in self.columns] + list(self.constraints)
        return f"CREATE TABLE IF NOT EXISTS {self.name} (\n  " + ",\n  ".join(parts) + "\n)"


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


TABLES: tuple[Table, ...] = (
    Table("meta", (("key", "TEXT PRIMARY KEY"), ("value", "TEXT"))),
    Table(
        "sessions",
        (
            ("id", "TEXT PRIMARY KEY"),
            ("agent", "TEXT"),
            ("user", "TEXT"),
            ("source", "TEXT"),
            ("model", "TEXT"),
            ("title", "TEXT"),
            ("started_at", "REAL"),
            ("ended_at", "REAL"),
            ("parent_session_id", "TEXT"),
            ("metadata", "TEXT NOT NULL DEFAULT '{}'"),
        ),
    ),
    Table(
        "messages",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("session_id", "TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE"),
            ("role", "TEXT NOT NULL DEFAULT 'user'"),
            ("content", "TEXT NOT NULL DEFAULT ''"),
            ("tool_name", "TEXT"),
            ("at", "REAL"),
            ("token_count", "INTEGER"),
            ("metadata", "TEXT NOT NULL DEFAULT '{}'"),
        ),
    ),
    Table(
        "memories",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("content", "TEXT NOT NULL"),
            ("kind", "TEXT NOT NULL DEFAULT 'semantic'"),
            ("category", "TEXT NOT NULL DEFAULT 'general'"),
            ("tier", "TEXT NOT NULL DEFAULT 'active'"),
            ("agent", "TEXT NOT NULL DEFAULT ''"),
            ("user", "TEXT NOT NULL DEFAULT ''"),
            ("importance", "REAL NOT NULL DEFAULT 0.5"),
            ("strength", "REAL NOT NULL DEFAULT 1.0"),  # as of the last decay pass / reinforcement
            ("anchor_strength", "REAL NOT NULL DEFAULT 1.0"),  # strength at last_reinforced_at
            ("access_count", "INTEGER NOT NULL DEFAULT 0"),
            ("created_at", "REAL NOT NULL DEFAULT 0"),
            ("last_accessed_at", "REAL"),
            ("last_reinforced_at", "REAL NOT NULL DEFAULT 0"),
            ("archive_at", "REAL"),  # when decay will cross the threshold
            ("pinned", "INTEGER NOT NULL DEFAULT 0"),
            ("session_id", "TEXT"),
            ("message_id", "INTEGER"),
            ("metadata", "TEXT NOT NULL DEFAULT '{}'"),
            ("absorbed_into", "INTEGER"),
            ("embedded", "INTEGER NOT NULL DEFAULT 0"),  # 1 once memories_vec holds its vector
            ("updated_at", "REAL NOT NULL DEFAULT 0"),
        ),
    ),
    Table(
        "rules",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("text", "TEXT NOT NULL"),
            ("domain", "TEXT NOT NULL DEFAULT ''"),
            ("agent", "TEXT NOT NULL DEFAULT ''"),
            ("source", "TEXT NOT NULL DEFAULT 'manual'"),
            ("score", "REAL NOT NULL DEFAULT 5"),
            ("status", "TEXT NOT NULL DEFAULT 'active'"),
            ("violations", "INTEGER NOT NULL DEFAULT 0"),
            ("last_reinforced_at", "REAL"),
            ("last_decayed_at", "REAL"),
            ("created_at", "REAL NOT NULL DEFAULT 0"),
            ("pinned", "INTEGER NOT NULL DEFAULT 0"),
            ("absorbed_into", "INTEGER"),
            ("metadata", "TEXT NOT NULL DEFAULT '{}'"),
            ("updated_at", "REAL NOT NULL DEFAULT 0"),
        ),
    ),
    Table(
        "rule_history",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("rule_id", "INTEGER NOT NULL REFERENCES rules(id) ON DELETE CASCADE"),
            ("at", "REAL NOT NULL"),
            ("old_score", "REAL"),
            ("new_score", "REAL NOT NULL"),
            ("old_status", "TEXT"),
            ("new_status", "TEXT"),
            ("reason", "TEXT NOT NULL DEFAULT ''"),
            ("actor", "TEXT NOT NULL DEFAULT ''"),
        ),
    ),
    Table(
        "flows",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("name", "TEXT NOT NULL UNIQUE"),
            ("domain", "TEXT NOT NULL DEFAULT ''"),
            ("agent", "TEXT NOT NULL DEFAULT ''"),
            ("triggers", "TEXT NOT NULL DEFAULT '[]'"),
            ("needs_approval", "INTEGER NOT NULL DEFAULT 0"),
            ("steps", "TEXT NOT NULL DEFAULT '[]'"),
            ("status", "TEXT NOT NULL DEFAULT 'active'"),
            ("description", "TEXT NOT NULL DEFAULT ''"),
            ("created_at", "REAL NOT NULL DEFAULT 0"),
            ("updated_at", "REAL NOT NULL DEFAULT 0"),
            ("metadata", "TEXT NOT NULL DEFAULT '{}'"),
        ),
    ),
    Table(
        "flow_runs",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("flow_id", "INTEGER NOT NULL REFERENCES flows(id) ON DELETE CASCADE"),
            ("outcome", "TEXT NOT NULL CHECK (outcome IN ('pass', 'fail'))"),
            ("note", "TEXT NOT NULL DEFAULT ''"),
            ("agent", "TEXT NOT NULL DEFAULT ''"),
            ("at", "REAL NOT NULL"),
        ),
    ),
    Table(
        "proposals",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("kind", "TEXT NOT NULL"),  # merge | archive | promote | retire
            ("target_kind", "TEXT NOT NULL"),  # memory | rule
            ("status", "TEXT NOT NULL DEFAULT 'pending'"),
            ("members", "TEXT NOT NULL DEFAULT '[]'"),
            ("survivor_text", "TEXT"),
            ("evidence", "TEXT NOT NULL DEFAULT '{}'"),
            ("fingerprint", "TEXT NOT NULL"),
            ("run_id", "INTEGER"),
            ("created_at", "REAL NOT NULL"),
            ("decided_at", "REAL"),
            ("decided_by", "TEXT"),
            ("reason", "TEXT"),
            ("applied_at", "REAL"),
            ("undone_at", "REAL"),
            ("result_id", "INTEGER"),
            ("snapshot", "TEXT"),  # prior state, for an exact undo
        ),
    ),
    Table(
        "curator_runs",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("started_at", "REAL NOT NULL"),
            ("finished_at", "REAL"),
            ("dry_run", "INTEGER NOT NULL DEFAULT 0"),
            ("counts", "TEXT NOT NULL DEFAULT '{}'"),
            ("report_dir", "TEXT"),
            ("watermark", "INTEGER"),
        ),
    ),
    Table(
        "audit",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("at", "REAL NOT NULL"),
            ("actor", "TEXT NOT NULL"),
            ("action", "TEXT NOT NULL"),
            ("target_kind", "TEXT NOT NULL DEFAULT ''"),
            ("target_id", "TEXT NOT NULL DEFAULT ''"),
            ("reason", "TEXT NOT NULL DEFAULT ''"),
            ("summary", "TEXT NOT NULL DEFAULT ''"),
            ("prev_hash", "TEXT NOT NULL DEFAULT ''"),
            ("hash", "TEXT NOT NULL DEFAULT ''"),
        ),
    ),
    Table(
        "forget_requests",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("scope_kind", "TEXT NOT NULL"),  # memory | session | agent | user | query
            ("scope_value", "TEXT NOT NULL"),  # ids, names, or the query's sha256 once executed
            ("reason", "TEXT NOT NULL"),
            ("requested_by", "TEXT NOT NULL"),
            ("requested_at", "REAL NOT NULL"),
            ("deadline", "REAL"),
            ("status", "TEXT NOT NULL DEFAULT 'open'"),
            ("selected", "TEXT NOT NULL DEFAULT '{}'"),
            ("counts", "TEXT NOT NULL DEFAULT '{}'"),
            ("residue", "INTEGER"),
            ("executed_at", "REAL"),
            ("verified_at", "REAL"),
        ),
    ),
    Table(
        "tombstones",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("request_id", "INTEGER REFERENCES forget_requests(id)"),
            ("target_kind", "TEXT NOT NULL"),
            ("target_id", "TEXT NOT NULL"),
            ("content_sha256", "TEXT NOT NULL"),  # legacy rows only (plain sha256); new rows ''
            ("forgotten_at", "REAL NOT NULL"),
            ("ident_hash", "TEXT"),  # keyed hashes (engine/tombstones.py), never text
            ("content_hash", "TEXT"),
        ),
    ),
    Table(
        "import_watermarks",
        (
            ("source", "TEXT PRIMARY KEY"),
            ("value", "TEXT NOT NULL"),
            ("updated_at", "REAL NOT NULL"),
        ),
    ),
    # A log of memories whose vector, filter fields or text changed (or that were written or
    # deleted), so the in-memory matrices (engine/retrieval/vector_matrix.py, keyword_matrix.py)
    # in any process catch up incrementally. text_changed = 1: the words changed (the keyword
    # matrix re-reads only those; a tier change is not its business).
    Table(
        "vector_changes",
        (
            ("seq", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("memory_id", "INTEGER NOT NULL"),
            ("text_changed", "INTEGER NOT NULL DEFAULT 0"),
        ),
    ),
)

TOKENIZE_WORDS = "porter unicode61 remove_diacritics 2"

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
    Virtual(
        "memories_vec",
        f"CREATE VIRTUAL TABLE memories_vec USING vec0(memory_id INTEGER PRIMARY KEY, "
        f"embedding float[{EMBED_DIM}] distance_metric=cosine, tier TEXT, kind TEXT, "
        f"category TEXT, agent TEXT, user TEXT)",
        "UPDATE memories SET embedded = 0",
    ),
)

NAMED: tuple[Named, ...] = (
    Named("index", "messages_session", "CREATE INDEX messages_session ON messages(session_id, at)"),
    Named("index", "sessions_started", "CREATE INDEX sessions_started ON sessions(started_at)"),
    Named("index", "sessions_parent", "CREATE INDEX sessions_parent ON sessions(parent_session_id)"),
    Named("index", "memories_tier", "CREATE INDEX memories_tier ON memories(tier, agent)"),
    # Only memories that decay are indexed: a pass finds new rows (NULL) and crossers by range.
    Named(
        "index",
        "memories_archive_at",
        "CREATE INDEX memories_archive_at ON memories(archive_at) WHERE tier = 'active' AND pinned = 0",
    ),
    Named("index", "memories_session", "CREATE INDEX memories_session ON memories(session_id)"),
    Named("index", "memories_embedded", "CREATE INDEX memories_embedded ON memories(embedded)"),
    Named("index", "memories_absorbed", "CREATE INDEX memories_absorbed ON memories(absorbed_into)"),
    Named("index", "rules_status", "CREATE INDEX rules_status ON rules(status, score)"),
    Named("index", "rule_history_rule", "CREATE INDEX rule_history_rule ON rule_history(rule_id, at)"),
    Named("index", "flow_runs_flow", "CREATE INDEX flow_runs_flow ON flow_runs(flow_id, at)"),
    Named("index", "proposals_status", "CREATE INDEX proposals_status ON proposals(status, kind)"),
    Named("index", "proposals_fp", "CREATE INDEX proposals_fp ON proposals(fingerprint)"),
    Named("index", "audit_target", "CREATE INDEX audit_target ON audit(target_kind, target_id)"),
    Named("index", "audit_at", "CREATE INDEX audit_at ON audit(at)"),
    Named(
        "index", "tombstones_ident", "CREATE INDEX tombstones_ident ON tombstones(target_kind, ident_hash)"
    ),
    Named(
        "index",
        "tombstones_content",
        "CREATE INDEX tombstones_content ON tombstones(target_kind, content_hash)",
    ),
    Named(
        "index",
        "tombstones_legacy",
        "CREATE INDEX tombstones_legacy ON tombstones(target_kind, content_sha256) "
        "WHERE content_sha256 != ''",
    ),
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
)


def reconcile(conn):
    """Bring the open file up to this schema in one transaction (engine/schema_reconcile.py)."""
    from engine.storage.sqlite.reconcile import reconcile as run

    return run(conn)
