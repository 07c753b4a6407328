"""A rule's stored row as a dataclass, the checks on rule input (score, id) and the scores a
rejection and a revival start from."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from engine.errors import InvalidInput, cut
from engine.lifecycle.types import Rule
from engine.types import load_json

REJECTION_SCORE = 10.0
REVIVE_SCORE = 5.0  # a revived rule re-enters the active band at least here


def row_to_rule(r: Any) -> Rule:
    return Rule(
        id=r["id"],
        text=r["text"],
        domain=r["domain"],
        agent=r["agent"],
        source=r["source"],
        score=float(r["score"]),
        status=r["status"],
        violations=int(r["violations"]),
        last_reinforced_at=r["last_reinforced_at"],
        last_decayed_at=r["last_decayed_at"],
        created_at=r["created_at"],
        pinned=bool(r["pinned"]),
        absorbed_into=r["absorbed_into"],
        metadata=load_json(r["metadata"]),
    )


def check_score(value: Any) -> float:
    """A rule score from input: a number from 0 to 10."""
    try:
        s = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"a rule score is a number from 0 to 10, not {cut(value)}") from None
    if math.isnan(s) or not 0.0 <= s <= 10.0:
        raise InvalidInput(f"a rule score is a number from 0 to 10, not {value}")
    return s


def check_rule_id(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"a rule id is a whole number, not {cut(value)}") from None


def as_tuple(v: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if v is None:
        return None
    return (v,) if isinstance(v, str) else tuple(v)


Changes = dict[str, Any]
