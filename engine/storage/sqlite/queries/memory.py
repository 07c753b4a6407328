"""Memory read model in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from engine.batches import chunked
from engine.storage.indexes import MemoryFilter
from engine.storage.queries.memory import HEAD_CHARS, MATRIX_FIELDS, WEIGHT_COLUMNS, MemoryQueries
from engine.storage.sqlite.filters import where
from engine.storage.sqlite.gateways.columns import marks

_WEIGHT = ", ".join(WEIGHT_COLUMNS)
# The role of the message a memory was made from: its speaker when neither metadata nor text names one.
_ROLE = "(SELECT role FROM messages WHERE messages.id = memories.message_id) AS role"


class SqliteMemoryQueries(MemoryQueries):
    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self.conn.execute(sql, params).fetchall()

    # -- memories ------------------------------------------------------------------------------------
    def same_text(self, content: str, agent: str) -> int | None:
        row = self.conn.execute(
            "SELECT id FROM memories WHERE content = ? AND agent = ? AND tier != 'archived' LIMIT 1",
            (content, agent),
        ).fetchone()
        return int(row[0]) if row else None

    def from_message(self, message_id: int) -> list[Any]:
        return self._all("SELECT * FROM memories WHERE message_id = ? ORDER BY id", (message_id,))

    def listed(
        self,
        *,
        tier: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
        limit: int = 500,
    ) -> list[Any]:
        conds, params = ["1=1"], []
        for col, val in (("tier", tier), ("agent", agent), ("session_id", session_id)):
            if val:
                conds.append(f"{col} = ?")
                params.append(val)
        return self._all(
            f"SELECT * FROM memories WHERE {' AND '.join(conds)} ORDER BY id DESC LIMIT ?",
            (*params, int(limit)),
        )

    def pending_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM memories WHERE embedded = 0").fetchone()[0])

    def pending(self, limit: int) -> list[Any]:
        return self._all("SELECT * FROM memories WHERE embedded = 0 ORDER BY id LIMIT ?", (int(limit),))

    def content_of(self, memory_id: int) -> str | None:
        row = self.conn.execute("SELECT content FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return None if row is None else row[0]

    def counts(self) -> tuple[dict[str, int], int, int, int, int]:
        c = self.conn
        tiers = {str(t): int(n) for t, n in c.execute("SELECT tier, count(*) FROM memories GROUP BY tier")}
        rules = c.execute("SELECT count(*) FROM rules WHERE status != 'retired'").fetchone()[0]
        pending = c.execute("SELECT count(*) FROM proposals WHERE status = 'pending'").fetchone()[0]
        forgets = c.execute(
            "SELECT count(*) FROM forget_requests WHERE status IN ('open', 'previewed')"
        ).fetchone()[0]
        sessions = c.execute("SELECT count(*) FROM sessions").fetchone()[0]
        return tiers, rules, pending, forgets, sessions

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
        conds: list[str] = ["1=1"]
        params: list[Any] = []
        for col, val in (("s.agent", agent), ("s.user", user), ("s.source", source)):
            if val:
                conds.append(f"{col} = ?")
                params.append(val)
        if since is not None:
            conds.append("s.started_at >= ?")
            params.append(since)
        if until is not None:
            conds.append("s.started_at < ?")
            params.append(until)
        if text:
            t = f"%{text}%"
            conds.append("(s.title LIKE ? OR s.id LIKE ? OR s.agent LIKE ? OR s.user LIKE ?)")
            params += [t, t, t, t]
        return self._all(
            "SELECT s.*, (SELECT count(*) FROM messages WHERE session_id = s.id) AS n FROM sessions s"
            f" WHERE {' AND '.join(conds)} ORDER BY s.started_at DESC LIMIT ?",
            (*params, int(limit)),
        )

    def session(self, session_id: str) -> Any:
        return self.conn.execute(
            "SELECT s.*, (SELECT count(*) FROM messages WHERE session_id = s.id) AS n"
            " FROM sessions s WHERE id = ?",
            (session_id,),
        ).fetchone()

    def messages_of(self, session_id: str) -> list[Any]:
        return self._all("SELECT * FROM messages WHERE session_id = ? ORDER BY at, id", (session_id,))

    def children(self, session_id: str) -> list[Any]:
        return self._all(
            "SELECT * FROM sessions WHERE parent_session_id = ? ORDER BY started_at", (session_id,)
        )

    def messages_like(
        self, patterns: Sequence[str], *, session_id: str | None, agent: str | None, limit: int
    ) -> list[Any]:
        conds = " OR ".join("m.content LIKE ? ESCAPE '\\'" for _ in patterns)
        extra, params = "", []
        if session_id:
            extra += " AND m.session_id = ?"
            params.append(session_id)
        if agent:
            extra += " AND s.agent = ?"
            params.append(agent)
        return self._all(
            "SELECT m.*, s.title AS session_title FROM messages m JOIN sessions s ON s.id = m.session_id"
            f" WHERE ({conds}){extra} ORDER BY m.at DESC LIMIT ?",
            (*patterns, *params, int(limit)),
        )

    # -- search -------------------------------------------------------------------------------------------
    def weighting(self, ids: Sequence[int], *, metadata: bool = False) -> list[Any]:
        cols = (
            f"{_WEIGHT}, metadata, substr(content, 1, {HEAD_CHARS}) AS head, {_ROLE}" if metadata else _WEIGHT
        )
        out: list[Any] = []
        for part in chunked(ids):
            out += self._all(f"SELECT {cols} FROM memories WHERE id IN ({marks(len(part))})", part)
        return out

    def rows(self, ids: Sequence[int]) -> list[Any]:
        out: list[Any] = []
        for part in chunked(ids):
            out += self._all(f"SELECT * FROM memories WHERE id IN ({marks(len(part))})", part)
        return out

    def boost_fields(self, memory_id: int) -> Any:
        return self.conn.execute(
            f"SELECT metadata, created_at, substr(content, 1, {HEAD_CHARS}) AS head, {_ROLE}"
            " FROM memories WHERE id = ?",
            (memory_id,),
        ).fetchone()

    def session_neighbours(self, ids: Sequence[int], filters: MemoryFilter) -> list[tuple[int, Any, Any]]:
        cond, params = where(filters)
        out: list[tuple[int, Any, Any]] = []
        for part in chunked(ids, 400):
            out += [
                (r[0], r[1], r[2])
                for r in self.conn.execute(
                    f"SELECT m.id, (SELECT id FROM memories WHERE session_id = m.session_id AND id < m.id"
                    f" AND {cond} ORDER BY id DESC LIMIT 1), (SELECT id FROM memories WHERE session_id ="
                    f" m.session_id AND id > m.id AND {cond} ORDER BY id LIMIT 1) FROM memories m WHERE"
                    f" m.id IN ({marks(len(part))}) AND m.session_id IS NOT NULL",
                    (*params, *params, *part),
                )
            ]
        return out

    def like_ranked(self, patterns: Sequence[str], filters: MemoryFilter, n: int) -> list[int]:
        cond, params = where(filters, "m.")
        conds = " OR ".join("m.content LIKE ? ESCAPE '\\'" for _ in patterns)
        return [
            int(r[0])
            for r in self.conn.execute(
                f"SELECT m.id FROM memories m WHERE ({conds}) AND {cond} ORDER BY m.id DESC LIMIT ?",
                (*patterns, *params, n),
            )
        ]

    def id_range(self) -> tuple[int, int]:
        # Two statements: SQLite answers a lone min() or max() from the index, both at once by a scan.
        hi = self.conn.execute("SELECT max(id) FROM memories").fetchone()[0] or 0
        lo = self.conn.execute("SELECT min(id) FROM memories").fetchone()[0] or 0
        return int(hi), int(lo)

    def tier_counts(self) -> dict[str, int]:
        return {
            r[0]: int(r[1]) for r in self.conn.execute("SELECT tier, count(*) FROM memories GROUP BY tier")
        }

    # -- the in-memory matrices' loading -------------------------------------------------------------
    def all_ids(self) -> Iterator[int]:
        return (r[0] for r in self.conn.execute("SELECT id FROM memories ORDER BY id"))

    def text_length(self, ids: Sequence[int]) -> int:
        total = 0
        for part in chunked(ids):
            total += int(
                self.conn.execute(
                    "SELECT coalesce(sum(length(content)), 0) FROM memories"
                    f" WHERE id IN ({marks(len(part))})",
                    part,
                ).fetchone()[0]
            )
        return total

    def texts(self, ids: Sequence[int]) -> Iterator[tuple[int, str]]:
        for part in chunked(ids):
            yield from self.conn.execute(
                f"SELECT id, content FROM memories WHERE id IN ({marks(len(part))})", part
            ).fetchall()

    def embedded_fields(self) -> list[Any]:
        return self._all(f"SELECT id, {', '.join(MATRIX_FIELDS)} FROM memories WHERE embedded = 1")

    def embedded_fields_joined(self, sep: str) -> list[Any]:
        joined = " || ? || ".join(MATRIX_FIELDS)  # the separator bound, never spliced in
        return self._all(
            f"SELECT id, {joined} FROM memories WHERE embedded = 1 ORDER BY id",
            [sep] * (len(MATRIX_FIELDS) - 1),
        )
