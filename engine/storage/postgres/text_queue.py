"""Could this statement have queued text for the keyword index (`fts_pending`)? The triggers
(schema.py) queue a row on INSERT into a keyword source table and on UPDATE OF its text columns,
nothing else. A write whose statements could not have skips the upkeep's `DELETE FROM fts_pending
RETURNING` (issue #24: a recall writes access, audit and log rows, never text). Conservative: any
statement it cannot read as plainly harmless answers yes."""

from __future__ import annotations

import re
from typing import Any

from engine.storage.postgres.schema import KEYWORD_SOURCES

_TEXT_COLS = {table: cols for table, cols in KEYWORD_SOURCES.values()}
# The first words: the verb and, for INSERT INTO / UPDATE, the table (unquoted or quoted).
_HEAD = re.compile(r'\s*(\w+)(?:\s+(?:INTO\s+)?(?:ONLY\s+)?"?(\w+)"?)?', re.IGNORECASE)


def may_queue_text(sql: Any) -> bool:
    if not isinstance(sql, str) or ";" in sql.rstrip().rstrip(";"):
        return True  # composed DDL, several statements: not read here
    m = _HEAD.match(sql)
    if m is None:
        return True
    verb, table = m.group(1).upper(), (m.group(2) or "").lower()
    if verb in ("SELECT", "DELETE", "SET", "SAVEPOINT", "RELEASE", "BEGIN", "COMMIT"):
        return False  # reads and locks; a delete's trigger unindexes at once (queues nothing)
    if verb == "INSERT":  # a source's trigger queues; a rebuild (doctor) queues into fts_pending itself
        return table in _TEXT_COLS or table == "fts_pending"
    if verb == "UPDATE":
        cols = _TEXT_COLS.get(table)
        return cols is not None and any(c in sql for c in cols)
    return True  # WITH, COPY, MERGE, DO, CALL, ...
