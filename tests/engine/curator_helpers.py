"""Shared by the curator and forget tests: a full logical dump and a few seeds."""

from __future__ import annotations

from engine.clock import DAY
from tests.direct_sql import direct

TABLES = ("memories", "rules", "rule_history", "sessions", "messages")


def dump(eng) -> dict:
    """Every record table, every vector with its metadata, and proof each keyword index equals its
    table (through the storage port, so it holds on either backend)."""
    health = eng.store.health
    for index, _ in health.keyword_indexes():
        ok, detail = health.index_integrity(index)
        assert ok, f"{index}: {detail}"
    c = direct(eng.store)
    out = {t: [tuple(r) for r in c.execute(f"SELECT * FROM {t} ORDER BY id")] for t in TABLES}
    vs = eng.store.vector_store
    with eng.store.reading() as conn:
        ids = sorted(int(r[0]) for batch in vs.scan(conn) for r in batch)
        out["vec"] = [tuple(r) for r in vs.entries(conn, ids)]
    return out


def add_rule(eng, text, *, score=5.0, status="active", agent="", last=None, pinned=0) -> int:
    now = eng.clock.now()
    last = now if last is None else last

    def w(conn):
        return int(
            direct(conn)
            .execute(
                "INSERT INTO rules(text, agent, score, status, last_reinforced_at, created_at, pinned, updated_at)"
                " VALUES (?,?,?,?,?,?,?,?) RETURNING id",
                (text, agent, score, status, last, last, pinned, now),
            )
            .fetchone()[0]
        )

    return eng.store.write(w)


def age(eng, memory_id: int, days: float) -> None:
    """Make a memory look idle for `days` (as if written then and never touched)."""
    t = eng.clock.now() - days * DAY
    eng.store.write(
        lambda c: direct(c).execute(
            "UPDATE memories SET created_at = ?, last_reinforced_at = ?, last_accessed_at = NULL WHERE id = ?",
            (t, t, memory_id),
        )
    )


TWIN_A = "The staging deploy key is kept in the vault under ops/staging/keys"
TWIN_B = "The staging deploy key is kept in the vault under ops/staging/keys."
OTHER = "Lunch orders go to the shared spreadsheet every Friday morning"
