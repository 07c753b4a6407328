"""`rule_history` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.rule_history import RuleHistoryRows


class PgRuleHistoryRows(RuleHistoryRows):
    pass
