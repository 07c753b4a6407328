"""The change feed the in-memory matrices follow: `vector_changes`, a log that triggers on
`memories` append to whenever a vector, a filter field or the text changes, or a memory is written
or deleted (`text_changed` marks the entries the keyword matrix needs).

In SQLite's SQL; the log is filled by the triggers of this adapter's schema.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.storage.feed import CatchUp, Follower
    from engine.storage.port import Connection


class VectorChangeLog:
    """Reads of the `vector_changes` log (sequence numbers only grow; old entries are pruned)."""

    def head(self, conn: Connection) -> tuple[int, int]:
        """(newest, oldest) sequence number in the log; (0, 0) when it is empty."""
        # two subqueries: SQLite answers a lone min() or max() from the index, both together
        # in one SELECT by scanning the whole log
        top, low = conn.execute(
            "SELECT coalesce((SELECT max(seq) FROM vector_changes), 0), "
            "coalesce((SELECT min(seq) FROM vector_changes), 0)"
        ).fetchone()
        return int(top), int(low)

    def newest(self, conn: Connection) -> int:
        """The newest sequence number (0: the log is empty)."""
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM vector_changes").fetchone()[0])

    def changed(self, conn: Connection, after: int, upto: int | None = None, text: bool = False) -> list[int]:
        """The memory ids logged after sequence `after` (up to `upto`, inclusive, if given);
        `text`: only those whose words changed (written, edited or deleted)."""
        sql = "SELECT DISTINCT memory_id FROM vector_changes WHERE seq > ?"
        params: list[Any] = [after]
        if upto is not None:
            sql += " AND seq <= ?"
            params.append(upto)
        if text:
            sql += " AND text_changed = 1"
        return [int(r[0]) for r in conn.execute(sql, params)]

    def changed_vectors(self, conn: Connection, after: int) -> tuple[list[int], list[Any] | None]:
        return self.changed(conn, after), None

    def follow(self, follower: Follower) -> None:
        """Nothing read ahead: a SQLite read is a call into the same process, not a round trip."""

    def caught_up(self, conn: Connection, after: int) -> CatchUp | None:
        return None
