"""The tables and columns every backend holds, named once: what the SQLite adapter
(engine/storage/sqlite/schema.py) and the PostgreSQL adapter (engine/storage/postgres/schema.py)
each render in their own DDL, and what the port's portable SQL may name.

A column's declaration is written in the shared vocabulary (INTEGER, REAL, TEXT, `INTEGER PRIMARY
KEY AUTOINCREMENT` for an id never reused, NOT NULL, DEFAULT, REFERENCES, CHECK); each adapter maps
it to its own types. An index is its table, its columns and an optional predicate; each adapter
writes its own index DDL. Keyword and vector indexes, triggers and server functions are the
adapters' own. Bump GENERATION whenever a table changes shape, and keep a fixture for each
generation under tests/fixtures/ (issue: schema evolution).
"""

from __future__ import annotations

from dataclasses import dataclass

GENERATION = 2  # 2: AUTOINCREMENT ids, the identity stamp (application_id, meta)
EMBED_DIM = 384  # floats per stored vector (all-MiniLM-L6-v2)


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[tuple[str, str], ...]  # (name, declaration)
    constraints: tuple[str, ...] = ()


@dataclass(frozen=True)
class Index:
    """A plain index: no data of its own, so an adapter recreates it when its definition changes."""

    name: str
    table: str
    columns: str  # "a, b", in key order
    where: str = ""  # a partial index's predicate


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
            # issue 24: the keyed digest of reason+summary the chain covers (NULL on older rows),
            # and a forget's keyed mark of the text it redacted (engine/audit/hashing.py)
            ("digest", "TEXT"),
            ("redaction", "TEXT"),
            # issue 24: the hash chain the row is in (several on PostgreSQL, engine/audit/partitions.py);
            # exported so a migrated log keeps its chains (SQLite writes 0, verifies each it holds)
            ("part", "INTEGER NOT NULL DEFAULT 0"),
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
            # The case's workflow (issue #25/#27): match mode, exclusions, withdrawal, approvals,
            # accepted residue -- who and when, never forgotten text.
            ("workflow", "TEXT NOT NULL DEFAULT '{}'"),
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
    # One row per agent recall (engine/recalls/log.py): what was asked, what came back and how it
    # scored. hits: JSON [{id, score, parts}]; hit_ids: " 12 34 " (a forget finds rows by LIKE).
    Table(
        "recall_log",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("at", "REAL NOT NULL"),
            ("door", "TEXT NOT NULL DEFAULT ''"),  # mcp | hermes | cli | engine
            ("agent", "TEXT NOT NULL DEFAULT ''"),
            ("actor", "TEXT NOT NULL DEFAULT ''"),  # the verified identity of the call
            ("query", "TEXT NOT NULL DEFAULT ''"),
            ("filters", "TEXT NOT NULL DEFAULT '{}'"),
            ("mode", "TEXT NOT NULL DEFAULT ''"),
            ("k", "INTEGER NOT NULL DEFAULT 10"),
            ("hits", "TEXT NOT NULL DEFAULT '[]'"),
            ("hit_ids", "TEXT NOT NULL DEFAULT ' '"),
            ("keyword_scope", "TEXT NOT NULL DEFAULT '[]'"),
            ("latency_ms", "REAL"),
            ("model", "TEXT NOT NULL DEFAULT ''"),
        ),
    ),
    # "For this query (and filters), memory M must be in the top k" (engine/recalls/checks.py).
    Table(
        "retrieval_checks",
        (
            ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
            ("query", "TEXT NOT NULL"),
            ("filters", "TEXT NOT NULL DEFAULT '{}'"),
            ("mode", "TEXT NOT NULL DEFAULT ''"),
            ("memory_id", "INTEGER NOT NULL"),
            ("k", "INTEGER NOT NULL DEFAULT 10"),
            ("created_at", "REAL NOT NULL"),
            ("created_by", "TEXT NOT NULL DEFAULT ''"),
            ("recall_id", "INTEGER"),
            ("due", "INTEGER NOT NULL DEFAULT 1"),  # touched since its last run
            ("last_run_at", "REAL"),
            ("last_ok", "INTEGER"),
            ("last_rank", "INTEGER"),
            ("last_why", "TEXT NOT NULL DEFAULT ''"),
        ),
    ),
)

INDEXES: tuple[Index, ...] = (
    Index("messages_session", "messages", "session_id, at"),
    Index("sessions_started", "sessions", "started_at"),
    Index("sessions_parent", "sessions", "parent_session_id"),
    Index("memories_tier", "memories", "tier, agent"),
    # Only memories that decay are indexed: a pass finds new rows (NULL) and crossers by range.
    Index("memories_archive_at", "memories", "archive_at", "tier = 'active' AND pinned = 0"),
    Index("memories_session", "memories", "session_id"),
    Index("memories_embedded", "memories", "embedded"),
    Index("memories_absorbed", "memories", "absorbed_into"),
    Index("rules_status", "rules", "status, score"),
    Index("rule_history_rule", "rule_history", "rule_id, at"),
    Index("flow_runs_flow", "flow_runs", "flow_id, at"),
    Index("proposals_status", "proposals", "status, kind"),
    Index("proposals_fp", "proposals", "fingerprint"),
    Index("audit_target", "audit", "target_kind, target_id"),
    Index("audit_at", "audit", "at"),
    Index("tombstones_ident", "tombstones", "target_kind, ident_hash"),
    Index("tombstones_content", "tombstones", "target_kind, content_hash"),
    Index("tombstones_legacy", "tombstones", "target_kind, content_sha256", "content_sha256 != ''"),
    Index("recall_log_at", "recall_log", "at"),
    Index("recall_log_agent", "recall_log", "agent, at"),
    Index("retrieval_checks_memory", "retrieval_checks", "memory_id"),
)
