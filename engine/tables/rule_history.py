"""The `rule_history` table's old gateway module: delegates to `conn.rule_history`
(engine/storage/gateways/rule_history.py and each adapter's), kept until the lead removes the
shims."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.storage.gateways.rule_history import COLUMNS, RuleChange

if TYPE_CHECKING:
    from engine.storage.port import Connection

__all__ = ["COLUMNS", "RuleChange", "of_rule", "record", "record_many", "remove"]


def record(conn: Connection, *a: Any, **k: Any) -> int:
    return conn.rule_history.record(*a, **k)


def record_many(conn: Connection, *a: Any, **k: Any) -> None:
    return conn.rule_history.record_many(*a, **k)


def of_rule(conn: Connection, *a: Any, **k: Any) -> list[Any]:
    return conn.rule_history.of_rule(*a, **k)


def remove(conn: Connection, *a: Any, **k: Any) -> None:
    return conn.rule_history.remove(*a, **k)
