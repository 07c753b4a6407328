"""The PostgreSQL schema's indexes (schema.py puts the statements together): the shared tables'
(`PG_INDEXES`, named as tables.py's INDEXES) and those of the tables only PostgreSQL has."""

from __future__ import annotations

# The shared tables' indexes (their names are tables.py's INDEXES'). Only memories that decay are
# in memories_archive_at: a decay pass finds new rows (NULL) and crossers by range.
PG_INDEXES: dict[str, str] = {
    "messages_session": "CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id, at)",
    "sessions_started": "CREATE INDEX IF NOT EXISTS sessions_started ON sessions(started_at)",
    "sessions_parent": "CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(parent_session_id)",
    "memories_tier": "CREATE INDEX IF NOT EXISTS memories_tier ON memories(tier, agent)",
    "memories_archive_at": "CREATE INDEX IF NOT EXISTS memories_archive_at ON memories(archive_at)"
    " WHERE tier = 'active' AND pinned = 0",
    "memories_session": "CREATE INDEX IF NOT EXISTS memories_session ON memories(session_id)",
    "memories_embedded": "CREATE INDEX IF NOT EXISTS memories_embedded ON memories(embedded)",
    "memories_absorbed": "CREATE INDEX IF NOT EXISTS memories_absorbed ON memories(absorbed_into)",
    "rules_status": "CREATE INDEX IF NOT EXISTS rules_status ON rules(status, score)",
    "rule_history_rule": "CREATE INDEX IF NOT EXISTS rule_history_rule ON rule_history(rule_id, at)",
    "flow_runs_flow": "CREATE INDEX IF NOT EXISTS flow_runs_flow ON flow_runs(flow_id, at)",
    "proposals_status": "CREATE INDEX IF NOT EXISTS proposals_status ON proposals(status, kind)",
    "proposals_fp": "CREATE INDEX IF NOT EXISTS proposals_fp ON proposals(fingerprint)",
    "audit_target": "CREATE INDEX IF NOT EXISTS audit_target ON audit(target_kind, target_id)",
    "audit_at": "CREATE INDEX IF NOT EXISTS audit_at ON audit(at)",
    "tombstones_ident": "CREATE INDEX IF NOT EXISTS tombstones_ident ON tombstones(target_kind, ident_hash)",
    "tombstones_content": "CREATE INDEX IF NOT EXISTS tombstones_content ON tombstones(target_kind,"
    " content_hash)",
    "tombstones_legacy": "CREATE INDEX IF NOT EXISTS tombstones_legacy ON tombstones(target_kind,"
    " content_sha256) WHERE content_sha256 != ''",
    "recall_log_at": "CREATE INDEX IF NOT EXISTS recall_log_at ON recall_log(at)",
    "recall_log_agent": "CREATE INDEX IF NOT EXISTS recall_log_agent ON recall_log(agent, at)",
    "retrieval_checks_memory": "CREATE INDEX IF NOT EXISTS retrieval_checks_memory"
    " ON retrieval_checks(memory_id)",
}


EXTRA_INDEXES = (
    "CREATE INDEX IF NOT EXISTS fts_terms_doc ON fts_terms(src, doc_id)",
    # Cosine HNSW for KNN past the exact-scan threshold (vector.py); pgvector's defaults
    # (m 16, ef_construction 64) reach recall@10 >= 0.98 at 100k (bench/pg_vectors.py).
    "CREATE INDEX IF NOT EXISTS memory_vectors_hnsw ON memory_vectors"
    " USING hnsw (embedding vector_cosine_ops)",
    # An agent filter is the selective one: its exact scan reads that agent's rows only.
    "CREATE INDEX IF NOT EXISTS memory_vectors_agent ON memory_vectors(agent)",
)
EXTRA_INDEX_NAMES = ("fts_terms_doc", "memory_vectors_hnsw", "memory_vectors_agent", "audit_part_seq")
