"""Memory read model in PostgreSQL's SQL. SQLite's ordering is kept where a column may be NULL
(NULL sorts first ascending there: `NULLS FIRST` / `DESC NULLS LAST` here); SQLite's LIKE
(case-insensitive) is ILIKE; id sets go as one array parameter, never in chunks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from engine.storage.indexes import FILTER_FIELDS, MemoryFilter
from engine.storage.postgres.gateways.columns import ident
from engine.storage.queries.memory import HEAD_CHARS, MATRIX_FIELDS, WEIGHT_COLUMNS, MemoryQueries

_WEIGHT = ", ".join(WEIGHT_COLUMNS)
# The role of the message a memory was made from: its speaker when neither metadata nor text names one.
_ROLE = "(SELECT role FROM messages WHERE messages.id = memories.message_id) AS role"


def where(filters: MemoryFilter, prefix: str = "") -> tuple[str, list[Any]]:
    """A search's filters as a WHERE fragment over memory columns (`prefix` like 'm.'), `%s`
    parameters."""
    parts = [f"{prefix}tier = ANY(%s::text[])"]
    params: list[Any] = [list(filters.tiers)]
    for col in FILTER_FIELDS:
        val = getattr(filters, col)
        if val is not None:
            parts.append(f"{prefix}{ident(col)} = %s")
            params.append(val)
    return " AND ".join(parts), params


class PgMemoryQueries(MemoryQueries):
    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self.conn.execute(sql, params).fetchall()

    # -- memories ------------------------------------------------------------------------------------
    def same_text(self, content: str, agent: str) -> int | None:
        row = self.conn.execute(
            "SELECT id FROM memories WHERE content = %s AND agent = %s AND tier != 'archived' LIMIT 1",
            (content, agent),
        ).fetchone()
        return int(row[0]) if row else None

    def from_message(self, message_id: int) -> list[Any]:
        return self._all("SELECT * FROM memories WHERE message_id = %s ORDER BY id", (message_id,))

    def listed(
        self,
        *,
        tier: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
        limit: int = 500,
    ) -> list[Any]:
        conds, params = ["TRUE"], []
        for col, val in (("tier", tier), ("agent", agent), ("session_id", session_id)):
            if val:
                conds.append(f"{col} = %s")
                params.append(val)
        return self._all(
            f"SELECT * FROM memories WHERE {' AND '.join(conds)} ORDER BY id DESC LIMIT %s",
            (*params, int(limit)),
        )

    def pending_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM memories WHERE embedded = 0").fetchone()[0])

    def pending(self, limit: int) -> list[Any]:
        return self._all("SELECT * FROM memories WHERE embedded = 0 ORDER BY id LIMIT %s", (int(limit),))

    def content_of(self, memory_id: int) -> str | None:
        row = self.conn.execute("SELECT content FROM memories WHERE id = %s", (memory_id,)).fetchone()
        return None if row is None else row[0]

    def counts(self) -> tuple[dict[str, int], int, int, int, int]:
        # One round trip: the tier counts as JSON beside the other four.
        r = self.conn.execute(
            "SELECT (SELECT coalesce(json_object_agg(tier, n), '{}') FROM"
            "        (SELECT tier, count(*) AS n FROM memories GROUP BY tier) t),"
            " (SELECT count(*) FROM rules WHERE status != 'retired'),"
            " (SELECT count(*) FROM proposals WHERE status = 'pending'),"
            " (SELECT count(*) FROM forget_requests WHERE status IN ('open', 'previewed')),"
            " (SELECT count(*) FROM sessions)"
        ).fetchone()
        tiers = r[0] if isinstance(r[0], dict) else {}
        return {str(t): int(n) for t, n in tiers.items()}, int(r[1]), int(r[2]), int(r[3]), int(r[4])

    # -- sessions and messages -------------------------------------------------------------------------
    def sessions(
        self,
        *,
        agent: str | None = None,
        user: str | None = None,
        source: str | None = None,
        since: float | None = None,
        until: float | None = None,
        text: str | None = None,
        limit: int = 500,
    ) -> list[Any]:
        conds: list[str] = ["TRUE"]
        params: list[Any] = []
        for col, val in (("s.agent", agent), ('s."user"', user), ("s.source", source)):
            if val:
                conds.append(f"{col} = %s")
                params.append(val)
        if since is not None:
            conds.append("s.started_at >= %s")
            params.append(since)
        if until is not None:
            conds.append("s.started_at < %s")
            params.append(until)
        if text:
            t = f"%{text}%"
            # SQLite's LIKE without ESCAPE has no escape character: neither has this one.
            conds.append(
                "(s.title ILIKE %s ESCAPE '' OR s.id ILIKE %s ESCAPE '' OR s.agent ILIKE %s ESCAPE ''"
                " OR s.\"user\" ILIKE %s ESCAPE '')"
            )
            params += [t, t, t, t]
        return self._all(
            "SELECT s.*, (SELECT count(*) FROM messages WHERE session_id = s.id) AS n FROM sessions s"
            f" WHERE {' AND '.join(conds)} ORDER BY s.started_at DESC NULLS LAST LIMIT %s",
            (*params, int(limit)),
        )

    def session(self, session_id: str) -> Any:
        return self.conn.execute(
            "SELECT s.*, (SELECT count(*) FROM messages WHERE session_id = s.id) AS n"
            " FROM sessions s WHERE id = %s",
            (session_id,),
        ).fetchone()

    def messages_of(self, session_id: str) -> list[Any]:
        return self._all(
            "SELECT * FROM messages WHERE session_id = %s ORDER BY at NULLS FIRST, id", (session_id,)
        )

    def children(self, session_id: str) -> list[Any]:
        return self._all(
            "SELECT * FROM sessions WHERE parent_session_id = %s ORDER BY started_at NULLS FIRST",
            (session_id,),
        )

    def messages_like(
        self, patterns: Sequence[str], *, session_id: str | None, agent: str | None, limit: int
    ) -> list[Any]:
        conds = " OR ".join("m.content ILIKE %s ESCAPE '\\'" for _ in patterns)
        extra, params = "", []
        if session_id:
            extra += " AND m.session_id = %s"
            params.append(session_id)
        if agent:
            extra += " AND s.agent = %s"
            params.append(agent)
        return self._all(
            "SELECT m.*, s.title AS session_title FROM messages m JOIN sessions s ON s.id = m.session_id"
            f" WHERE ({conds}){extra} ORDER BY m.at DESC NULLS LAST LIMIT %s",
            (*patterns, *params, int(limit)),
        )

    # -- search -------------------------------------------------------------------------------------------
    def weighting(self, ids: Sequence[int], *, metadata: bool = False) -> list[Any]:
        if not ids:
            return []
        if metadata:
            cols = f"{_WEIGHT}, metadata, left(content, {HEAD_CHARS}) AS head, {_ROLE}"
            return self._all(f"SELECT {cols} FROM memories WHERE id = ANY(%s::bigint[])", [list(ids)])
        memo = self._held_rows()
        if memo is None:
            return self._all(f"SELECT {_WEIGHT} FROM memories WHERE id = ANY(%s::bigint[])", [list(ids)])
        # In a read snapshot (a recall): whole rows, kept, so the hits' rows (`rows`, a few of these
        # candidates) need no statement of their own (issue #24: one statement less per recall).
        got = self._all("SELECT * FROM memories WHERE id = ANY(%s::bigint[])", [list(ids)])
        memo.update((int(r["id"]), r) for r in got)
        return got

    def rows(self, ids: Sequence[int]) -> list[Any]:
        if not ids:
            return []
        memo, want = self._held_rows() or {}, list(dict.fromkeys(ids))
        held = [memo[m] for m in want if m in memo]
        ask = [m for m in want if m not in memo]
        if ask:  # the snapshot's rows cannot change before it ends: only those not held are read
            held += self._all("SELECT * FROM memories WHERE id = ANY(%s::bigint[])", [ask])
        return held

    def _held_rows(self) -> dict[int, Any] | None:
        """Whole rows read in this read snapshot (None: not in one; every read asks)."""
        memo = getattr(self.conn, "snapshot", None)
        return None if memo is None else memo.setdefault("memory_rows", {})

    def boost_fields(self, memory_id: int) -> Any:
        return self.conn.execute(
            f"SELECT metadata, created_at, left(content, {HEAD_CHARS}) AS head, {_ROLE}"
            " FROM memories WHERE id = %s",
            (memory_id,),
        ).fetchone()

    def session_neighbours(self, ids: Sequence[int], filters: MemoryFilter) -> list[tuple[int, Any, Any]]:
        if not ids:
            return []
        cond, params = where(filters)
        rows = self.conn.execute(
            f"SELECT m.id, (SELECT id FROM memories WHERE session_id = m.session_id AND id < m.id"
            f" AND {cond} ORDER BY id DESC LIMIT 1), (SELECT id FROM memories WHERE session_id ="
            f" m.session_id AND id > m.id AND {cond} ORDER BY id LIMIT 1) FROM memories m WHERE"
            f" m.id = ANY(%s::bigint[]) AND m.session_id IS NOT NULL",
            (*params, *params, list(ids)),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def like_ranked(self, patterns: Sequence[str], filters: MemoryFilter, n: int) -> list[int]:
        cond, params = where(filters, "m.")
        conds = " OR ".join("m.content ILIKE %s ESCAPE '\\'" for _ in patterns)
        return [
            int(r[0])
            for r in self.conn.execute(
                f"SELECT m.id FROM memories m WHERE ({conds}) AND {cond} ORDER BY m.id DESC LIMIT %s",
                (*patterns, *params, n),
            ).fetchall()
        ]

    def id_range(self) -> tuple[int, int]:
        # One statement: PostgreSQL answers both min() and max() from the primary key's index.
        r = self.conn.execute("SELECT coalesce(max(id), 0), coalesce(min(id), 0) FROM memories").fetchone()
        return int(r[0]), int(r[1])

    def tier_counts(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self._all("SELECT tier, count(*) FROM memories GROUP BY tier")}

    # -- the in-memory matrices' loading -------------------------------------------------------------
    def all_ids(self) -> Iterator[int]:
        return (r[0] for r in self._all("SELECT id FROM memories ORDER BY id"))

    def text_length(self, ids: Sequence[int]) -> int:
        if not ids:
            return 0
        r = self.conn.execute(
            "SELECT coalesce(sum(length(content)), 0) FROM memories WHERE id = ANY(%s::bigint[])", [list(ids)]
        ).fetchone()
        return int(r[0])

    def texts(self, ids: Sequence[int]) -> Iterator[tuple[int, str]]:
        if ids:
            yield from self._all("SELECT id, content FROM memories WHERE id = ANY(%s::bigint[])", [list(ids)])

    def embedded_fields(self) -> list[Any]:
        cols = ", ".join(ident(f) for f in MATRIX_FIELDS)
        return self._all(f"SELECT id, {cols} FROM memories WHERE embedded = 1")

    def embedded_fields_joined(self, sep: str) -> list[Any]:
        joined = " || %s || ".join(ident(f) for f in MATRIX_FIELDS)  # the separator bound
        return self._all(
            f"SELECT id, {joined} FROM memories WHERE embedded = 1 ORDER BY id",
            [sep] * (len(MATRIX_FIELDS) - 1),
        )
