"""`rule_history` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.rule_history import RuleHistoryRows


class SqliteRuleHistoryRows(RuleHistoryRows):
    pass
