"""Where each operation lives now that the engine is services grouped by noun.

`MemoryEngine` keeps only the hot names (`add_memory`, `add_memories`, `search`, `explain`,
`wait_for_embedder`, `close`, `counts`, `data_version`); everything else is `eng.<noun>.<verb>`.
This table maps the old flat names to their new homes; while call sites move over, the façade
resolves them through it (engine.MemoryEngine.__getattr__). It goes when no caller uses them.
"""
from __future__ import annotations

MOVED: dict[str, str] = {
    # memories
    "add_memory_ex": "memories.add_ex",
    "add_memories_ex": "memories.add_many_ex",
    "get_memory": "memories.get",
    "list_memories": "memories.list",
    "reinforce_memory": "memories.reinforce",
    "pin_memory": "memories.pin",
    "unpin_memory": "memories.unpin",
    "set_importance": "memories.set_importance",
    "set_tier": "memories.set_tier",
    "archive_memory": "memories.archive",
    "edit_memory": "memories.edit",
    "memories_from_message": "memories.from_message",
    "pending_vectors": "memories.pending_vectors",
    "backfill_vectors": "memories.backfill_vectors",
    "current_strength": "memories.current_strength",
    # sessions and the episodic log
    "add_session": "sessions.add",
    "add_message": "sessions.add_message",
    "add_messages": "sessions.add_messages",
    "list_sessions": "sessions.list",
    "get_session": "sessions.get",
    "get_message": "sessions.get_message",
    "search_messages": "sessions.search_messages",
    "count_message_matches": "sessions.count_matches",
    # retrieval
    "keyword_plan": "retrieval.keyword_plan",
    "embed_query": "retrieval.embed_query",
    "_keyword_ranks": "retrieval.keyword_ranks",
    "start_embedder": "embedder.start",
    # lifecycle: decay
    "decay_pass": "decay.run",
    "last_decay_pass_at": "decay.last_run_at",
    "forecast": "decay.forecast",
    "decay_curve": "decay.curve",
    "strength_distribution": "decay.distribution",
    "forecast_timeline": "decay.timeline",
    # lifecycle: rules
    "get_rule": "rules.get",
    "list_rules": "rules.list",
    "rule_counts": "rules.counts",
    "rule_history": "rules.history",
    "rule_detail": "rules.detail",
    "rule_curve": "rules.curve",
    "rule_facets": "rules.facets",
    "add_rule": "rules.add",
    "pin_rule": "rules.pin",
    "unpin_rule": "rules.unpin",
    "retire_rule": "rules.retire",
    "revive_rule": "rules.revive",
    "reinforce_rule": "rules.reinforce",
    "record_violation": "rules.record_violation",
    "set_rule_score": "rules.set_score",
    "reject": "rules.reject",
    # lifecycle: flows, gates, boot
    "list_flows": "flows.list",
    "get_flow": "flows.get",
    "flow_detail": "flows.detail",
    "check_flows": "flows.check",
    "add_flow": "flows.add",
    "add_flow_doc": "flows.add_doc",
    "record_flow_run": "flows.record_run",
    "set_flow_status": "flows.set_status",
    "gate_pre": "gates.pre",
    "gate_post": "gates.post",
    "boot_context": "boot.context",
}
