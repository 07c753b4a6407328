"""The change feed the in-memory matrices follow: `vector_changes`, a log that triggers on
`memories` append to whenever a vector, a filter field or the text changes, or a memory is written
or deleted (`text_changed` marks the entries the keyword matrix needs).

In PostgreSQL's SQL; the log is filled by the triggers of this adapter's schema.py.

Inside a read snapshot the first `head()` is a catch-up (issue #24): with the head it reads the
store's model tag, the log's entries past the furthest-behind matrix of this process, the changed
memories' vectors and contents — one statement where a recall's two matrices sent seven (head,
changed ids, their vectors, the tag, text-changed ids, their length, their contents). Past
`CATCH_UP_MAX` entries it reads the head and tag only and the matrices ask as before (a burst
makes them reload anyway).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from engine.storage.feed import TEXTS, VECTORS, CatchUp
from engine.storage.postgres.vector import MODEL_MEMO, TAG
from engine.storage.postgres.vector_wire import blob_of

if TYPE_CHECKING:
    from engine.storage.feed import Follower
    from engine.storage.port import Connection


CATCH_UP_MAX = 1000  # log entries one catch-up reads with their vectors and contents
TEXT_MAX_CHARS = 200_000  # contents read ahead only up to this (keyword_matrix.SYNC_MAX_CHARS)
_HEAD = (
    "coalesce((SELECT max(seq) FROM vector_changes), 0), coalesce((SELECT min(seq) FROM vector_changes), 0)"
)
# One statement: the head, the tag, the entries after %(after)s (at most CATCH_UP_MAX + 1: one more
# says "too many"), and, only when they all came, the changed memories' vectors and contents (the
# contents only while their length is within %(chars)s). Every part reads the same snapshot.
_CATCH_UP = f"""
WITH c AS MATERIALIZED (
  SELECT seq, memory_id, text_changed FROM vector_changes WHERE seq > %(after)s
  ORDER BY seq LIMIT %(cap)s + 1)
SELECT {_HEAD}, {TAG}, e.n <= %(cap)s, e.seqs, e.ids, e.flags,
  v.ids, v.embeddings, v.tiers, v.kinds, v.categories, v.agents, v.users,
  coalesce(t.chars, 0), t.ids, t.contents
FROM (SELECT count(*) AS n, array_agg(seq ORDER BY seq) AS seqs, array_agg(memory_id ORDER BY seq) AS ids,
        array_agg(text_changed ORDER BY seq) AS flags FROM c) AS e
CROSS JOIN LATERAL (
  SELECT array_agg(memory_id) AS ids, array_agg(vector_send(embedding)) AS embeddings,
    array_agg(tier) AS tiers, array_agg(kind) AS kinds, array_agg(category) AS categories,
    array_agg(agent) AS agents, array_agg("user") AS users
  FROM memory_vectors
  WHERE %(vectors)s AND e.n BETWEEN 1 AND %(cap)s AND memory_id IN (SELECT memory_id FROM c)) AS v
CROSS JOIN LATERAL (
  SELECT sum(length(content)) AS chars,
    CASE WHEN sum(length(content)) <= %(chars)s THEN array_agg(id) END AS ids,
    CASE WHEN sum(length(content)) <= %(chars)s THEN array_agg(content) END AS contents
  FROM memories
  WHERE %(texts)s AND e.n BETWEEN 1 AND %(cap)s
    AND id IN (SELECT memory_id FROM c WHERE text_changed = 1)) AS t
"""

# The memories logged after %s with their vector store entries (NULLs: no vector any more).
_CHANGED_VECTORS = (
    'SELECT c.memory_id, vector_send(v.embedding), v.tier, v.kind, v.category, v.agent, v."user"'
    " FROM (SELECT DISTINCT memory_id FROM vector_changes WHERE seq > %s) AS c"
    " LEFT JOIN memory_vectors v ON v.memory_id = c.memory_id ORDER BY c.memory_id"
)


class VectorChangeLog:
    """Reads of the `vector_changes` log (sequence numbers only grow; old entries are pruned)."""

    def __init__(self) -> None:
        # This process's matrices (weakly: a dropped matrix stops being read for).
        self._followers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.Lock()  # a background load adds one while a recall lists them

    def follow(self, follower: Follower) -> None:
        with self._lock:
            self._followers.add(follower)

    def head(self, conn: Connection) -> tuple[int, int]:
        """(newest, oldest) sequence number in the log; (0, 0) when it is empty. Asked once per
        read snapshot: a recall's matrices (vectors, keywords) each sync in the same one, and the
        first ask reads ahead what they need (the module's docstring)."""
        memo = getattr(conn, "snapshot", None)
        if memo is not None and "feed_head" in memo:
            return memo["feed_head"]
        if memo is not None:
            with self._lock:
                behind = [f for f in list(self._followers) if f.seq >= 0]
            if behind:
                return self._catch_up(conn, memo, behind)
        # two subqueries: each answered from the index's end
        top, low = conn.execute(f"SELECT {_HEAD}").fetchone()
        if memo is not None:
            memo["feed_head"] = (int(top), int(low))
        return int(top), int(low)

    def _catch_up(self, conn: Connection, memo: dict[str, Any], followers: list[Follower]) -> tuple[int, int]:
        after = min(f.seq for f in followers)
        reads = {f.reads for f in followers}
        r = conn.execute(
            _CATCH_UP,
            {
                "after": after,
                "cap": CATCH_UP_MAX,
                "vectors": VECTORS in reads,
                "texts": TEXTS in reads,
                "chars": TEXT_MAX_CHARS,
            },
        ).fetchone()
        top, low = int(r[0]), int(r[1])
        memo["feed_head"] = (top, low)
        memo[MODEL_MEMO] = str(r[2])  # the tag, in the vectors' snapshot (the switch window)
        if not r[3]:  # too many entries: the followers ask on their own
            return top, low
        seqs, ids, flags = r[4] or [], r[5] or [], r[6] or []
        vectors = None
        if VECTORS in reads:
            vectors = {
                int(m): (m, blob_of(e), t, k, c, a, u)
                for m, e, t, k, c, a, u in zip(*(x or [] for x in r[7:14]), strict=True)
            }
        texts = None
        if TEXTS in reads and int(r[14]) <= TEXT_MAX_CHARS:
            texts = {int(m): c for m, c in zip(r[15] or [], r[16] or [], strict=True)}
        memo["feed_catch_up"] = CatchUp(
            after=after,
            seqs=[int(s) for s in seqs],
            ids=[int(m) for m in ids],
            text_flags=[bool(t) for t in flags],
            vectors=vectors,
            texts=texts,
            text_chars=int(r[14]),
        )
        return top, low

    def changed_vectors(self, conn: Connection, after: int) -> tuple[list[int], list[Any] | None]:
        """Inside a write (dedup against the matrix): the ids logged after `after` with their
        vectors in one statement (was two: the ids, then their entries)."""
        rows = conn.execute(_CHANGED_VECTORS, [after]).fetchall()
        ids = [int(r[0]) for r in rows]
        return ids, [(r[0], blob_of(r[1]), *r[2:]) for r in rows if r[1] is not None]

    def caught_up(self, conn: Connection, after: int) -> CatchUp | None:
        memo = getattr(conn, "snapshot", None)
        got = memo.get("feed_catch_up") if memo is not None else None
        return got if got is not None and got.covers(after) else None

    def newest(self, conn: Connection) -> int:
        """The newest sequence number (0: the log is empty)."""
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM vector_changes").fetchone()[0])

    def changed(self, conn: Connection, after: int, upto: int | None = None, text: bool = False) -> list[int]:
        """The memory ids logged after sequence `after` (up to `upto`, inclusive, if given);
        `text`: only those whose words changed (written, edited or deleted)."""
        sql = "SELECT DISTINCT memory_id FROM vector_changes WHERE seq > %s"
        params: list[Any] = [after]
        if upto is not None:
            sql += " AND seq <= %s"
            params.append(upto)
        if text:
            sql += " AND text_changed = 1"
        return [int(r[0]) for r in conn.execute(sql, params)]
