"""Read model: what doctor checks (the portable ones: row counts, references that point nowhere,
memories waiting for a vector). What differs by backend beyond SQL (integrity, keyword indexes,
vectors) is the store's health checks, engine/storage/health.py."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway, checked
from engine.storage.tables import TABLES

# The references doctor follows: check name -> what an offending row is.
ORPHAN_CHECKS: dict[str, str] = {
    "messages": "messages whose session does not exist",
    "absorbed_into": "memories absorbed into a memory that does not exist",
    "rule_absorbed_into": "rules absorbed into a rule that does not exist",
    "rule_history": "rule history rows whose rule does not exist",
    "flow_runs": "flow runs whose flow does not exist",
}


class HealthQueries(Gateway):
    """Read-only views; the caller's connection."""

    def count(self, table: str) -> int:
        """Rows in `table` (one of the schema's tables)."""
        (name,) = checked([table], [t.name for t in TABLES], "a table")
        return self._count(name)

    def _count(self, table: str) -> int:
        raise NotImplementedError

    def orphans(self, check: str) -> list[int]:
        """Ids of rows whose reference (one of ORPHAN_CHECKS) points at no row."""
        (name,) = checked([check], ORPHAN_CHECKS, "an orphan check")
        return self._orphans(name)

    def _orphans(self, check: str) -> list[int]:
        raise NotImplementedError

    def pending_vectors(self, limit: int) -> tuple[int, list[int]]:
        """(how many memories wait for a vector, the first `limit` of their ids)."""
        raise NotImplementedError
