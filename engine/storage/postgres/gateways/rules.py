"""`rules` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.rules import RuleRows


class PgRuleRows(RuleRows):
    pass
