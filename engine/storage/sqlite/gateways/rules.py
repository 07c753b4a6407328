"""`rules` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.rules import RuleRows


class SqliteRuleRows(RuleRows):
    pass
