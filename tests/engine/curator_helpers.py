"""Shared by the curator and forget tests: a full logical dump and a few seeds."""

from __future__ import annotations

from engine.clock import DAY

TABLES = ("memories", "rules", "rule_history", "sessions", "messages")
FTS = ("memories_fts", "memories_tri", "rules_fts", "messages_fts", "messages_tri")


def dump(eng) -> dict:
    """Every record table, every vector with its metadata, and proof each FTS index equals its table."""

    def check(conn):
        for f in FTS:
            conn.execute(f"INSERT INTO {f}({f}, rank) VALUES ('integrity-check', 1)")

    eng.store.write(check)
    c = eng.store.conn
    out = {t: [tuple(r) for r in c.execute(f"SELECT * FROM {t} ORDER BY id")] for t in TABLES}
    out["vec"] = [
        tuple(r)
        for r in c.execute(
            "SELECT memory_id, embedding, tier, kind, category, agent, user FROM memories_vec ORDER BY memory_id"
        )
    ]
    return out


def add_rule(eng, text, *, score=5.0, status="active", agent="", last=None, pinned=0) -> int:
    now = eng.clock.now()
    last = now if last is None else last

    def w(conn):
        return int(
            conn.execute(
                "INSERT INTO rules(text, agent, score, status, last_reinforced_at, created_at, pinned, updated_at)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (text, agent, score, status, last, last, pinned, now),
            ).lastrowid
        )

    return eng.store.write(w)


def age(eng, memory_id: int, days: float) -> None:
    """Make a memory look idle for `days` (as if written then and never touched)."""
    t = eng.clock.now() - days * DAY
    eng.store.write(
        lambda c: c.execute(
            "UPDATE memories SET created_at = ?, last_reinforced_at = ?, last_accessed_at = NULL WHERE id = ?",
            (t, t, memory_id),
        )
    )


TWIN_A = "The staging deploy key is kept in the vault under ops/staging/keys"
TWIN_B = "The staging deploy key is kept in the vault under ops/staging/keys."
OTHER = "Lunch orders go to the shared spreadsheet every Friday morning"
