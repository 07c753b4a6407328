"""Audit partitions (issue #24): on PostgreSQL the log is several hash chains (`part`), so
concurrent audited writes append to different heads instead of queueing on one. Each chain is
verified on its own; what binds them is a periodic *heads record*: an ordinary audit row (action
`audit-heads`, chained and digest-covered like any other) whose summary lists every partition's
head (partition, position, hash) as committed when it was written. A partition deleted, cut back
before a bound head, or swapped with another (each chain still linked in itself) then leaves a
heads record naming a row that is not there or is another row. Heads records hold hashes, never
text: a forget's redaction (which never re-hashes a digest-chained row) leaves them true."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.storage.port import Connection

HEADS_ACTION = "audit-heads"
# An append whose id is a multiple of this writes a heads record after it (partitioned logs only).
HEADS_EVERY = 256


def heads_due(conn: Connection, row_id: int) -> bool:
    return conn.audit.partitions > 1 and row_id % HEADS_EVERY == 0


def heads_summary(conn: Connection) -> str:
    """Every partition's head now (this transaction's own row included), as a heads record's text."""
    heads = [[p, s, h] for p, s, h in conn.audit_queries.heads()]
    return json.dumps({"heads": heads}, separators=(",", ":"))


def bound_heads(r: Any) -> list[tuple[int, int, str]]:
    """What a heads record's text binds: [(partition, position, hash)]; [] when unreadable."""
    try:
        doc = json.loads(r["summary"])
        return [(int(p), int(s), str(h)) for p, s, h in doc["heads"]]
    except (ValueError, TypeError, KeyError):
        return []


@dataclass
class HeadsCheck:
    """The rows heads records bound, checked as a walk passes them."""

    want: dict[tuple[int, int], list[tuple[int, str]]] = field(default_factory=dict)  # -> (record id, hash)
    seen: set[tuple[int, int]] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    records: int = 0

    @classmethod
    def of(cls, records: Iterable[Any]) -> HeadsCheck:
        chk = cls()
        for r in records:
            chk.records += 1
            for part, pos, h in bound_heads(r):
                chk.want.setdefault((part, pos), []).append((int(r["id"]), h))
        return chk

    def row(self, part: int, pos: int, r: Any) -> None:
        key = (part, pos)
        bound = self.want.get(key)
        if bound is None:
            return
        self.seen.add(key)
        for rec, h in bound:
            if r["hash"] != h:
                self.problems.append(
                    f"row {r['id']}: partition {part} position {pos} is not the row the heads record "
                    f"at row {rec} bound (replaced, or partitions swapped)"
                )

    def finish(self) -> list[str]:
        for (part, pos), bound in sorted(self.want.items()):
            if (part, pos) not in self.seen:
                recs = ", ".join(str(rec) for rec, _ in bound[:3])
                self.problems.append(
                    f"partition {part} position {pos} is missing: bound by the heads record at row "
                    f"{recs} (the partition was cut back or deleted)"
                )
        return self.problems
